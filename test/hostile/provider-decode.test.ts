/**
 * Hostile input, class 1 and 2, against a provider process: what a request body may cost to decode.
 * Element bombs, the decoded-elements budget of executing calls, compressed bodies (refused when
 * compression is off, bounded by a ratio when on), v8 bodies (refused unless named), and own
 * `__proto__` keys through every serializer. Each scenario runs a fresh provider child, measures its
 * peak RSS against the bytes sent, and keeps a well-behaved client calling it throughout.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/rpc-error.js';
import { DEFAULT_MAX_INFLATE_RATIO } from '../../src/protocol/compression.js';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { emptyRows } from './fixtures/wide-service.js';
import { expectWithinBound } from './support/bounds.js';
import {
  deflate,
  emptyMaps,
  FrameFlag,
  msgpack,
  request,
  SERIALIZER,
  V8_HUGE_ARRAY,
  v8OwnProto,
} from './support/frames.js';
import { connectRawPeer, destroyRawPeers, type RawPeer } from './support/raw-peer.js';
import { killTargets, startProviderTarget, type Target } from './support/targets.js';
import { startWellBehaved, type WellBehaved } from './support/well-behaved.js';

afterEach(async () => {
  destroyRawPeers();
  await closeAll();
  await killTargets();
});

/** Writes `frames` one by one; returns the bytes sent. */
async function send(peer: RawPeer, frames: Buffer[]): Promise<number> {
  let sent = 0;
  for (const bytes of frames) {
    await peer.write(bytes);
    sent += bytes.length;
  }
  return sent;
}

function statuses(peer: RawPeer): number[] {
  return [...peer.answers.values()].map((answer) => answer.status);
}

async function expectServedThroughout(good: WellBehaved, target: Target): Promise<void> {
  await good.served();
  const stats = await good.stop();
  expect(stats, JSON.stringify(stats)).toMatchObject({ failed: 0, wrong: 0 });
  expect(stats.ok).toBeGreaterThan(0);
  expect(stats.slowestMs).toBeLessThan(3_000);
  expect(target.exited).toBe(false);
}

/** Waits until `count` requests are answered or held by the provider. */
async function settled(peer: RawPeer, target: Target, count: number): Promise<void> {
  await waitFor(
    async () => peer.answers.size + Number(await target.ask('holding', 'HOLDING')) >= count,
    20_000,
    { intervalMs: 50 },
  );
}

function loggedAbout(target: Target, ...parts: string[]): boolean {
  return target.logs().some((line) => parts.every((part) => line.includes(part)));
}

/** POSTs a protobuf body to the target's HTTP entry from 127.0.0.2; resolves with the status and body. */
function postProtobuf(port: number, path: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        localAddress: '127.0.0.2',
        agent: false,
        headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The arguments of `hold(60000, <string of length bytes>)`, msgpack. */
function heldString(bytes: number): Buffer {
  return Buffer.from(msgpack.encode([60_000, 'x'.repeat(bytes)]));
}

describe('hostile: decoding on a provider', () => {
  it('refuses a body of more elements than maxDecodedElements before decoding it, and logs the peer', async () => {
    const target = await startProviderTarget({ maxDecodedElements: 100_000 });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // hold(60000, [{} x 1,000,000]): 1 MB that msgpackr would turn into 64 MB of empty objects, held
    const body = emptyMaps(1_000_000, [60_000]);
    const sent = await send(
      peer,
      Array.from({ length: 8 }, (_, i) => request(i + 1, 'hold', body)),
    );
    await settled(peer, target, 8);
    const after = await target.peak();
    expectWithinBound({ name: 'msgpack element bomb (provider)', before, after, sentBytes: sent });
    expect(statuses(peer)).toEqual(Array(8).fill(ErrorCode.Serialization));
    expect(loggedAbout(target, '127.0.0.2', 'maxDecodedElements')).toBe(true);
    expect(peer.closed).toBe(false); // a body-level refusal keeps the connection
    await expectServedThroughout(good, target);
  });

  it('holds at most maxElementsInFlight decoded elements for executing calls; the rest is Overloaded', async () => {
    const target = await startProviderTarget({
      maxDecodedElements: 200_000,
      server: { maxElementsInFlight: 400_000, connectionShare: 1, addressShare: 1 },
    });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // 20 calls, each holding 150,000 empty maps (9.6 MB of heap) until released: 2 fit the budget
    const body = emptyMaps(150_000, [60_000]);
    const sent = await send(
      peer,
      Array.from({ length: 20 }, (_, i) => request(i + 1, 'hold', body)),
    );
    await settled(peer, target, 20);
    const after = await target.peak();
    // what the budget allows to be held: 400,000 elements of 64 bytes (an empty object each)
    expectWithinBound({
      name: 'decoded-elements budget (provider)',
      before,
      after,
      sentBytes: sent,
      allowedBytes: 400_000 * 64,
    });
    expect(statuses(peer)).toEqual(Array(18).fill(ErrorCode.Overloaded));
    expect(await target.ask('holding', 'HOLDING')).toBe('2');
    await target.ask('release', 'RELEASED');
    await waitFor(() => peer.answers.size === 20, 10_000);
    await expectServedThroughout(good, target);
  });

  it('refuses a protobuf body of empty sub-messages over maxDecodedElements before decoding it (framed)', async () => {
    const target = await startProviderTarget();
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // take(rows): 800 KB of empty Rows that protobufjs would turn into 400,000 objects of 48 defaults
    // (19.6 M values, ~230 MiB each), four at once
    const body = emptyRows(400_000);
    const sent = await send(
      peer,
      Array.from({ length: 4 }, (_, i) =>
        request(i + 1, 'take', body, { serializer: SERIALIZER.protobuf, service: 'hostile.Wide' }),
      ),
    );
    await waitFor(() => peer.answers.size === 4, 20_000, { intervalMs: 50 });
    const after = await target.peak();
    expectWithinBound({ name: 'protobuf empty sub-messages (framed)', before, after, sentBytes: sent });
    expect(statuses(peer)).toEqual(Array(4).fill(ErrorCode.Serialization));
    expect(loggedAbout(target, '127.0.0.2', 'maxDecodedElements')).toBe(true);
    // an honest body is served
    await send(peer, [
      request(9, 'take', emptyRows(10), { serializer: SERIALIZER.protobuf, service: 'hostile.Wide' }),
    ]);
    await waitFor(() => peer.answers.has(9), 10_000);
    expect(peer.answers.get(9)!.status).toBe(0);
    await expectServedThroughout(good, target);
  });

  it('refuses a protobuf body of empty sub-messages over maxDecodedElements before decoding it (HTTP)', async () => {
    const target = await startProviderTarget({ server: { http: { port: 0 } } });
    const port = Number(await target.ask('http', 'HTTP'));
    const good = await startWellBehaved(target.address);
    const before = await target.resetPeak();
    const body = emptyRows(400_000);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => postProtobuf(port, '/hostile.Wide/take', body)),
    );
    const after = await target.peak();
    expectWithinBound({
      name: 'protobuf empty sub-messages (HTTP)',
      before,
      after,
      sentBytes: 4 * body.length,
    });
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.text).toContain('maxDecodedElements');
    }
    const honest = await postProtobuf(port, '/hostile.Wide/take', emptyRows(10));
    expect(honest.status).toBe(200);
    await expectServedThroughout(good, target);
  });

  it('refuses compressed bodies when compression is off on the provider', async () => {
    const target = await startProviderTarget();
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // ~36 KB that inflate (at a ratio under 256) to an 8 MB string held by the call
    const body = deflate(heldString(8 * 1024 * 1024 - 1024), 1);
    const frames = Array.from({ length: 20 }, (_, i) =>
      request(i + 1, 'hold', body, { flags: FrameFlag.Compressed }),
    );
    const sent = await send(peer, frames);
    await settled(peer, target, 20);
    const after = await target.peak();
    expectWithinBound({ name: 'compressed, compression off (provider)', before, after, sentBytes: sent });
    expect(statuses(peer)).toEqual(Array(20).fill(ErrorCode.Serialization));
    expect(loggedAbout(target, '127.0.0.2', 'compress')).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('bounds how far a compressed body inflates when compression is on (maxInflateRatio)', async () => {
    const target = await startProviderTarget({ compressThresholdBytes: 1024 });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // ~8 KB that inflate ~1000:1 to an 8 MB string
    const body = deflate(heldString(8 * 1024 * 1024 - 1024), 9);
    const frames = Array.from({ length: 20 }, (_, i) =>
      request(i + 1, 'hold', body, { flags: FrameFlag.Compressed }),
    );
    const sent = await send(peer, frames);
    await settled(peer, target, 20);
    const after = await target.peak();
    // inflating stops at maxInflateRatio x the compressed size: that much is allowed, transiently
    expectWithinBound({
      name: 'deflate bomb, compression on (provider)',
      before,
      after,
      sentBytes: sent,
      allowedBytes: DEFAULT_MAX_INFLATE_RATIO * sent,
    });
    expect(statuses(peer)).toEqual(Array(20).fill(ErrorCode.Serialization));
    expect(loggedAbout(target, '127.0.0.2', 'maxInflateRatio')).toBe(true);
    await expectServedThroughout(good, target);
  });

  it('refuses v8 bodies unless server.serializers names v8', async () => {
    const target = await startProviderTarget();
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // 13 bytes describing a 2^25-element array: 268 MB the moment V8 reads them
    const frames = Array.from({ length: 6 }, (_, i) =>
      request(i + 1, 'hold', V8_HUGE_ARRAY, { serializer: SERIALIZER.v8 }),
    );
    const sent = await send(peer, frames);
    await settled(peer, target, 6);
    const after = await target.peak();
    expectWithinBound({ name: 'v8 array bomb, v8 not enabled (provider)', before, after, sentBytes: sent });
    expect(statuses(peer)).toEqual(Array(6).fill(ErrorCode.BadRequest));
    await expectServedThroughout(good, target);
  });

  it('lets no own __proto__ key reach a handler through json, msgpack or (named) v8', async () => {
    const target = await startProviderTarget({ server: { serializers: ['json', 'msgpack', 'v8'] } });
    const peer = await connectRawPeer(target.address);
    // msgpack [{"__proto__": {}}], json [{"__proto__": {}}], v8 [{"__proto__": {...}}] (own keys)
    const msgpackBody = Buffer.from([0x91, 0x81, 0xa9, ...Buffer.from('__proto__'), 0x81, 0xa1, 0x78, 0x01]);
    const jsonBody = Buffer.from('[{"__proto__":{"x":1}}]');
    await send(peer, [
      request(1, 'sawOwnProto', msgpackBody),
      request(2, 'sawOwnProto', jsonBody, { serializer: SERIALIZER.json }),
      request(3, 'sawOwnProto', v8OwnProto(), { serializer: SERIALIZER.v8 }),
    ]);
    await waitFor(() => peer.answers.size === 3, 10_000);
    const msgpackAnswer = peer.answers.get(1)!;
    expect(msgpackAnswer.status).toBe(0);
    expect(msgpack.decode(msgpackAnswer.body)).toBe(false); // msgpackr renames the key to __proto_
    expect(peer.answers.get(2)!.status).toBe(ErrorCode.Serialization);
    expect(peer.answers.get(3)!.status).toBe(ErrorCode.Serialization);
  });
});
