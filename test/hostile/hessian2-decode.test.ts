/**
 * Hostile hessian2 bodies (serializer id 5) against a provider process: element bombs, a small body of
 * shared references describing a value of 2^44 paths, deep nesting, and length, count and table claims
 * beyond the bytes sent. Each is refused with `Serialization` before it is decoded, with the provider's
 * peak RSS within the suite's bound and a well-behaved client served throughout.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/rpc-error.js';
import { createHessian2Serializer, HESSIAN2_SERIALIZER_ID } from '../../src/serialization/hessian2.js';
import { createJsonSerializer } from '../../src/serialization/json.js';
import { closeAll } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { expectWithinBound } from './support/bounds.js';
import { request } from './support/frames.js';
import { connectRawPeer, destroyRawPeers, type RawPeer } from './support/raw-peer.js';
import { killTargets, startProviderTarget, type Target } from './support/targets.js';
import { startWellBehaved, type WellBehaved } from './support/well-behaved.js';

const hessian = createHessian2Serializer();
const json = createJsonSerializer();

afterEach(async () => {
  destroyRawPeers();
  await closeAll();
  await killTargets();
});

const hessianRequest = (id: number, method: string, body: Uint8Array): Buffer =>
  request(id, method, body, { serializer: HESSIAN2_SERIALIZER_ID });

async function send(peer: RawPeer, frames: Buffer[]): Promise<number> {
  let sent = 0;
  for (const bytes of frames) {
    await peer.write(bytes);
    sent += bytes.length;
  }
  return sent;
}

/** The message of the error answer to request `id`. */
function messageOf(peer: RawPeer, id: number): string {
  const answer = peer.answers.get(id)!;
  const serializer = answer.serializer === HESSIAN2_SERIALIZER_ID ? hessian : json;
  return String((serializer.decode(answer.body) as { message: unknown }).message);
}

async function expectServedThroughout(good: WellBehaved, target: Target): Promise<void> {
  await good.served();
  const stats = await good.stop();
  expect(stats, JSON.stringify(stats)).toMatchObject({ failed: 0, wrong: 0 });
  expect(stats.ok).toBeGreaterThan(0);
  expect(stats.slowestMs).toBeLessThan(3_000);
  expect(target.exited).toBe(false);
}

/** The hessian2 arguments `(60000, [ [] x count ])` of `hold`: one byte per empty list. */
function emptyLists(count: number): Buffer {
  const head = Buffer.from([0x7a, 0xd4, 0xea, 0x60, 0x58, 0x49, 0, 0, 0, 0]);
  head.writeInt32BE(count, 6);
  return Buffer.concat([head, Buffer.alloc(count, 0x78)]);
}

/** `[[L0, L1, ..., L43]]` where L0 = [1, 1] and Li = [Q L(i-1), Q L(i-1)]: ~300 bytes, 2^44 paths. */
function sharedReferences(): Buffer {
  const items: number[] = [0x79, 0x58, 0xbc, 0x7a, 0x91, 0x91];
  for (let level = 1; level < 44; level++) {
    // L(i-1) is reference #(i+1): the argument list is #0, the outer list #1
    const ref = level + 1;
    const int = ref <= 47 ? [0x90 + ref] : [0xc8 + (ref >> 8), ref & 0xff];
    items.push(0x7a, 0x51, ...int, 0x51, ...int);
  }
  return Buffer.from(items);
}

describe('hostile: hessian2 bodies on a provider', () => {
  it('refuses a body of more elements than maxDecodedElements before decoding it', async () => {
    const target = await startProviderTarget({ maxDecodedElements: 100_000 });
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    // hold(60000, [[] x 1,000,000]): 1 MB that would become 1,000,000 arrays held by the call, 8 times
    const body = emptyLists(1_000_000);
    const sent = await send(
      peer,
      Array.from({ length: 8 }, (_, i) => hessianRequest(i + 1, 'hold', body)),
    );
    await waitFor(() => peer.answers.size === 8, 20_000, { intervalMs: 50 });
    const after = await target.peak();
    expectWithinBound({ name: 'hessian2 element bomb (provider)', before, after, sentBytes: sent });
    expect([...peer.answers.values()].map((a) => a.status)).toEqual(Array(8).fill(ErrorCode.Serialization));
    expect(messageOf(peer, 1)).toContain('maxDecodedElements');
    expect(peer.closed).toBe(false);
    await expectServedThroughout(good, target);
  });

  it('counts shared references as the value they describe: 300 bytes of 2^44 paths are refused', async () => {
    const target = await startProviderTarget();
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    // sawOwnProto walks its argument like any handler would: every path, 50 levels deep
    await send(peer, [hessianRequest(1, 'sawOwnProto', sharedReferences())]);
    await waitFor(() => peer.answers.size === 1, 10_000, { intervalMs: 50 });
    expect(peer.answers.get(1)!.status).toBe(ErrorCode.Serialization);
    expect(messageOf(peer, 1)).toContain('maxDecodedElements');
    // an honest body with shared references is served
    const inner = [1];
    await send(peer, [hessianRequest(2, 'sawOwnProto', hessian.encode([[inner, inner]]))]);
    await waitFor(() => peer.answers.has(2), 10_000);
    expect(peer.answers.get(2)!.status).toBe(0);
    await expectServedThroughout(good, target);
  });

  it('refuses nesting deeper than 1000 levels, and claims beyond the bytes sent, fast', async () => {
    const target = await startProviderTarget();
    const good = await startWellBehaved(target.address);
    const peer = await connectRawPeer(target.address);
    const before = await target.resetPeak();
    const bodies: Array<[Buffer, string]> = [
      [Buffer.concat([Buffer.alloc(200_000, 0x79), Buffer.from([0x4e])]), 'deeper than 1000 levels'],
      [Buffer.from([0x79, 0x58, 0x49, 0x7f, 0xff, 0xff, 0xff, 0x91]), 'a list claims 2147483647 elements'],
      [Buffer.from([0x79, 0x53, 0xff, 0xff, 0x61]), 'claims 65535 characters, 1 bytes left'],
      [Buffer.from([0x79, 0x42, 0xff, 0xff, 0x01]), '65535 bytes needed, 1 left'],
      [
        Buffer.from([0x79, 0x43, 0x01, 0x58, 0x49, 0x7f, 0xff, 0xff, 0xff]),
        'class definition claims 2147483647',
      ],
      [Buffer.from([0x79, 0x51, 0x49, 0x7f, 0xff, 0xff, 0xff]), 'reference #2147483647 refers past'],
      [Buffer.from([0x79, 0x4f, 0x49, 0x7f, 0xff, 0xff, 0xff]), 'class #2147483647, past the 0 classes'],
    ];
    const started = Date.now();
    const sent = await send(
      peer,
      bodies.map(([body], i) => hessianRequest(i + 1, 'hold', body)),
    );
    await waitFor(() => peer.answers.size === bodies.length, 10_000, { intervalMs: 20 });
    expect(Date.now() - started).toBeLessThan(5_000);
    const after = await target.peak();
    expectWithinBound({ name: 'hessian2 depth and claims (provider)', before, after, sentBytes: sent });
    bodies.forEach(([, message], i) => {
      expect(peer.answers.get(i + 1)!.status, message).toBe(ErrorCode.Serialization);
      expect(messageOf(peer, i + 1)).toContain(message);
    });
    expect(peer.closed).toBe(false);
    await expectServedThroughout(good, target);
  });

  it('lets no own __proto__ key reach a handler: a map with one is a Map, a class with such a field is refused', async () => {
    const target = await startProviderTarget();
    const peer = await connectRawPeer(target.address);
    // [{"__proto__": {"admin": true}}] as an untyped map, and an object of a class with a __proto__ field
    const map = Buffer.from([
      0x79,
      0x48,
      0x09,
      ...Buffer.from('__proto__'),
      0x48,
      0x05,
      ...Buffer.from('admin'),
      0x54,
      0x5a,
      0x5a,
    ]);
    const object = Buffer.from([0x79, 0x43, 0x01, 0x58, 0x91, 0x09, ...Buffer.from('__proto__'), 0x60, 0x4e]);
    await send(peer, [
      hessianRequest(1, 'sawOwnProto', map),
      hessianRequest(2, 'sawOwnProto', object),
      hessianRequest(3, 'echo', map),
    ]);
    await waitFor(() => peer.answers.size === 3, 10_000);
    expect(peer.answers.get(1)!.status).toBe(0);
    expect(hessian.decode(peer.answers.get(1)!.body)).toBe(false);
    // the key is kept, as a key: the handler got a Map, and its echo is one
    const echoed = hessian.decode(peer.answers.get(3)!.body);
    expect(echoed).toEqual(new Map([['__proto__', { admin: true }]]));
    expect(peer.answers.get(2)!.status).toBe(ErrorCode.Serialization);
    expect(messageOf(peer, 2)).toContain('__proto__');
  });
});
