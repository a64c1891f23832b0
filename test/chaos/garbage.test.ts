/**
 * Chaos 5 — garbage. 100,000+ hostile frames (fast-check: sound envelopes with random kinds, flags,
 * serializer ids, metadata and bodies; then per connection possibly one fatal tail: random bytes, wrong
 * magic or version, a length claim beyond the maximum, a frame cut short, a large claim followed by
 * almost nothing, a stream frame for a stream never opened) are written, many frames per write, over hundreds of connections into a provider
 * process. Properties, per connection: every request and ping in a sound envelope is answered and the
 * connection kept; a fatal tail closes that connection only; a well-behaved consumer's call made after
 * each batch succeeds. At the end the provider is alive and its RSS grew by less than a generous bound,
 * with dozens of half-sent large frames still held open against it.
 */
import net from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameFlag, FrameKind } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { closeAll, testApp } from '../support/apps.js';
import { ChaosDef } from './fixtures/chaos-service.js';
import { envelopeFrame, type FatalKind, fatalTail } from './support/garbage-frames.js';
import { killProviders, startProvider } from './support/provider-process.js';
import { rssMiB } from './support/rss.js';

const MAX_FRAME_BYTES = 8 * 1024 * 1024;
const TARGET_FRAMES = 100_000;
const RUNS = 220;
const RSS_GROWTH_BOUND_MIB = 150;
const HELD_MAX = 48;
const held: net.Socket[] = [];

afterEach(async () => {
  for (const socket of held.splice(0)) socket.destroy();
  await closeAll();
  await killProviders();
});

/** Responses the server owes for `frames`: one per two-way request, one pong per ping. */
function owedAnswers(frames: readonly Buffer[]): number {
  let owed = 0;
  for (const frame of frames) {
    const kind = frame[3];
    const flags = frame[4]!;
    if (kind === FrameKind.Request && (flags & FrameFlag.OneWay) === 0) owed++;
    else if (kind === FrameKind.Heartbeat && (flags & FrameFlag.Pong) === 0) owed++;
  }
  return owed;
}

type Outcome = 'answered' | 'closed';

/**
 * Writes `frames` (+ `tail`) in one write on a fresh connection. A fatal tail must get the connection
 * closed; otherwise every owed answer must arrive with the connection open. Connections left holding a
 * partial frame are kept open (up to HELD_MAX) to weigh on the server's memory.
 */
function sendBatch(
  address: string,
  frames: readonly Buffer[],
  tail: { kind: FatalKind; bytes: Buffer } | null,
): Promise<Outcome> {
  const [host, port] = address.split(':');
  const owed = owedAnswers(frames);
  const mustClose = tail !== null && tail.kind !== 'truncated' && tail.kind !== 'large-claim';
  return new Promise<Outcome>((resolve, reject) => {
    let answers = 0;
    let settled = false;
    const socket = net.connect({ host: host!, port: Number(port) });
    const timer = setTimeout(() => {
      finish(new Error(`no ${mustClose ? 'close' : `answers (${answers}/${owed})`} after 5 s`));
    }, 5_000);
    const finish = (error?: Error, outcome?: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        socket.destroy();
        reject(error);
        return;
      }
      if (outcome === 'answered' && tail !== null) {
        held.push(socket);
        if (held.length > HELD_MAX) held.shift()!.destroy();
      } else socket.destroy();
      resolve(outcome!);
    };
    const decoder = createFrameDecoder(
      (frame) => {
        if (frame.kind === FrameKind.Response || frame.kind === FrameKind.Heartbeat) answers++;
      },
      { maxFrameBytes: MAX_FRAME_BYTES },
    );
    socket.on('connect', () => socket.write(Buffer.concat(tail ? [...frames, tail.bytes] : frames)));
    socket.on('data', (chunk: Buffer) => {
      decoder.push(chunk);
      if (!mustClose && answers === owed) finish(undefined, 'answered');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (mustClose) finish(undefined, 'closed');
      else finish(new Error(`server closed the connection after ${answers}/${owed} answers`));
    });
    if (!mustClose && owed === 0)
      socket.once('connect', () => setImmediate(() => finish(undefined, 'answered')));
  });
}

describe('chaos: garbage', () => {
  it('survives 100,000 hostile frames, closes only the offending connections, keeps serving', async () => {
    const provider = await startProvider({ name: 'p-garbage' });
    const consumer = await testApp({ application: 'chaos-consumer' });
    const ref = consumer.refer(ChaosDef, { url: provider.address, timeoutMs: 5_000 });
    for (let i = 0; i < 200; i++) await ref.read(i);
    const rssBefore = rssMiB(provider.pid);
    let rssPeak = rssBefore;
    let frames = 0;
    let connections = 0;
    let closedByServer = 0;
    let goodCalls = 0;
    const started = Date.now();

    await fc.assert(
      fc.asyncProperty(
        fc.array(envelopeFrame, { minLength: 460, maxLength: 560 }),
        fc.option(fatalTail(MAX_FRAME_BYTES), { freq: 3 }),
        async (batch, tail) => {
          const outcome = await sendBatch(provider.address, batch, tail);
          connections++;
          frames += batch.length + (tail ? 1 : 0);
          if (outcome === 'closed') closedByServer++;
          goodCalls++;
          expect(await ref.read(goodCalls)).toBe(goodCalls);
          if (connections % 20 === 0) rssPeak = Math.max(rssPeak, rssMiB(provider.pid));
        },
      ),
      { numRuns: RUNS, endOnFailure: true },
    );
    rssPeak = Math.max(rssPeak, rssMiB(provider.pid));
    const heldOpen = held.length;
    const rssAfter = rssMiB(provider.pid);
    console.log(
      `[chaos] garbage: frames=${frames} connections=${connections} closedByServer=${closedByServer} ` +
        `heldOpen=${heldOpen} goodCalls=${goodCalls} failedGoodCalls=0 rssBeforeMiB=${rssBefore} ` +
        `rssPeakMiB=${rssPeak} rssAfterMiB=${rssAfter} durationMs=${Date.now() - started}`,
    );
    expect(frames).toBeGreaterThanOrEqual(TARGET_FRAMES);
    expect(provider.exited).toBe(false);
    expect(await ref.whoAmI()).toBe('p-garbage');
    expect(rssPeak - rssBefore).toBeLessThan(RSS_GROWTH_BOUND_MIB);
  }, 120_000);
});
