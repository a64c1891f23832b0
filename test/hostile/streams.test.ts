/**
 * Hostile stream frames against a provider, from a raw socket (test/support/raw-frames.ts): a window
 * update that would overflow 2^31-1, a message for a stream never opened, messages beyond a stream's
 * window. Each closes that connection with a log line naming the peer; other clients are served
 * throughout, and the provider keeps no stream of the closed connection.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/index.js';
import { FrameFlag, FrameKind } from '../../src/protocol/frame.js';
import { openStreams, type Probe, streaming, streamingImpl } from '../streams/fixture.js';
import { closeAll, testApp } from '../support/apps.js';
import { msgpack } from '../support/raw-client.js';
import { type RawFrameSocket, rawFrameSocket } from '../support/raw-frames.js';
import { waitFor } from '../support/wait-for.js';

const sockets: RawFrameSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await closeAll();
});

async function start() {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
  const probe: Probe = { produced: 0, finallyRan: 0, aborted: 0 };
  const provider = await testApp({ application: 'hostile-streams', server: { port: 0 }, logger });
  provider.provide(streaming, streamingImpl(probe));
  await provider.start();
  const consumer = await testApp({ application: 'good-consumer' });
  const good = consumer.refer(streaming, { url: provider.address!, retries: 0 });
  const raw = await rawFrameSocket(provider.address!);
  sockets.push(raw);
  return { provider, good, raw, lines };
}

function closed(raw: RawFrameSocket): Promise<void> {
  return new Promise((resolve) => {
    if (raw.socket.destroyed) resolve();
    else raw.socket.once('close', () => resolve());
  });
}

/** A good client's server stream and unary call still work. */
async function expectServed(good: Awaited<ReturnType<typeof start>>['good']): Promise<void> {
  let count = 0;
  for await (const _tick of good.count(1_000, -1)) count++;
  expect(count).toBe(1_000);
  expect(await good.ping()).toBe('pong');
}

const logged = (lines: string[], ...parts: string[]) =>
  lines.some((line) => parts.every((part) => line.includes(part)));

describe('hostile: stream frames on a provider', () => {
  it('closes a connection whose connection window update overflows 2^31-1', async () => {
    const { good, raw, lines } = await start();
    // a stream open, then credit that overflows the connection's window
    raw.request(1, 'test.Streaming', 'slow', [1_000], FrameFlag.Stream);
    raw.writer.windowUpdate(0, 2 ** 31 - 1);
    await closed(raw);
    await waitFor(() => logged(lines, 'overflows', '127.0.0.1') || undefined);
    await expectServed(good);
  });

  it('closes a connection whose stream window update overflows', async () => {
    const { provider, good, raw, lines } = await start();
    raw.request(1, 'test.Streaming', 'slow', [1_000], FrameFlag.Stream);
    raw.writer.windowUpdate(1, 2 ** 31 - 1);
    await closed(raw);
    await waitFor(() => logged(lines, 'overflows stream 1') || undefined);
    await waitFor(() => openStreams(provider) === 0 || undefined);
    await expectServed(good);
  });

  it('closes a connection that sends a message for a stream never opened', async () => {
    const { good, raw, lines } = await start();
    raw.writer.streamMessage(99, msgpack.id, msgpack.encode({ n: 1 }));
    await closed(raw);
    await waitFor(() => logged(lines, 'stream 99, never opened') || undefined);
    await expectServed(good);
  });

  it('closes a connection that sends messages beyond its stream window', async () => {
    const { provider, good, raw, lines } = await start();
    // a client stream whose handler never reads: the 64 KiB window fills and is never returned
    raw.request(1, 'test.Streaming', 'stall', [null], FrameFlag.Stream);
    const message = msgpack.encode({ n: 1, pad: 'x'.repeat(1_000) });
    for (let n = 0; n < 80; n++) raw.writer.streamMessage(1, msgpack.id, message);
    await closed(raw);
    await waitFor(() => logged(lines, "beyond stream 1's window") || undefined);
    await waitFor(() => openStreams(provider) === 0 || undefined);
    await expectServed(good);
  });

  it('drops, without closing, a message for a stream that already ended', async () => {
    const { raw } = await start();
    raw.request(1, 'test.Streaming', 'sum', ['late', null], FrameFlag.Stream);
    raw.writer.streamEnd(1);
    await raw.until((frame) => frame.kind === FrameKind.Response && frame.requestId === 1);
    raw.writer.streamMessage(1, msgpack.id, msgpack.encode(5));
    raw.ping(7);
    await raw.until((frame) => frame.kind === FrameKind.Heartbeat && frame.requestId === 7);
    expect(raw.socket.destroyed).toBe(false);
  });
});
