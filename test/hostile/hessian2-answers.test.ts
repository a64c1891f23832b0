/**
 * Hostile hessian2 answers, against a consumer process calling in hessian2: a fake provider (in this
 * process) answers with an element bomb, or with ~300 bytes of shared references describing 2^44
 * paths. Each is refused with `Serialization` before it is decoded, within the suite's memory bound,
 * while the consumer keeps calling a well-behaved provider.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HESSIAN2_SERIALIZER_ID } from '../../src/serialization/hessian2.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { createTargetImpl, TargetDef } from './fixtures/target-service.js';
import { expectWithinBound } from './support/bounds.js';
import { closeFakeProviders, type FakeProvider, startFakeProvider } from './support/fake-provider.js';
import { response } from './support/frames.js';
import { killTargets, startConsumerTarget, type Target } from './support/targets.js';

afterEach(async () => {
  await closeFakeProviders();
  await closeAll();
  await killTargets();
});

async function consumerOf(fake: FakeProvider): Promise<Target> {
  const good = await testApp({ application: 'good-provider' });
  good.provide(TargetDef, createTargetImpl().impl);
  await good.start();
  const consumer = await startConsumerTarget({
    hostile: [fake.address],
    good: good.address!,
    serializer: 'hessian2',
  });
  consumer.tell('good');
  return consumer;
}

/** A fake provider answering every request with `body` in hessian2, counting the bytes it sent. */
async function answering(body: Buffer): Promise<FakeProvider & { sent: () => number }> {
  let sent = 0;
  const fake = await startFakeProvider({
    onRequest(socket, request) {
      const bytes = response(request.requestId, body, { serializer: HESSIAN2_SERIALIZER_ID });
      sent += bytes.length;
      socket.write(bytes);
    },
  });
  return Object.assign(fake, { sent: () => sent });
}

async function call(consumer: Target, count: number): Promise<Record<string, number>> {
  return JSON.parse(await consumer.ask(`call ${count}`, 'RESULT')) as Record<string, number>;
}

async function expectServedThroughout(consumer: Target): Promise<void> {
  const stats = async () =>
    JSON.parse(await consumer.ask('good-stats', 'GOOD')) as {
      sent: number;
      ok: number;
      failed: number;
      wrong: number;
    };
  await waitFor(async () => (await stats()).ok > 0, 10_000, { intervalMs: 50 });
  await consumer.ask('good-stop', 'GOOD-STOPPED');
  const final = await waitFor(
    async () => {
      const s = await stats();
      return s.ok + s.failed + s.wrong === s.sent ? s : undefined;
    },
    10_000,
    { intervalMs: 50 },
  );
  expect(final, JSON.stringify(final)).toMatchObject({ failed: 0, wrong: 0 });
  expect(consumer.exited).toBe(false);
}

function loggedAbout(target: Target, ...parts: string[]): boolean {
  return target.logs().some((line) => parts.every((part) => line.includes(part)));
}

describe('hostile: hessian2 answers to a consumer', () => {
  it('refuses an answer of more elements than maxDecodedElements before decoding it', async () => {
    // [[] x 2,000,000]: 2 MB that would become 2,000,000 arrays
    const head = Buffer.from([0x58, 0x49, 0, 0, 0, 0]);
    head.writeInt32BE(2_000_000, 2);
    const fake = await answering(Buffer.concat([head, Buffer.alloc(2_000_000, 0x78)]));
    const consumer = await consumerOf(fake);
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 10);
    const after = await consumer.peak();
    expectWithinBound({ name: 'hessian2 element bomb (consumer)', before, after, sentBytes: fake.sent() });
    expect(codes).toEqual({ Serialization: 10 });
    expect(loggedAbout(consumer, fake.address, 'maxDecodedElements')).toBe(true);
    await expectServedThroughout(consumer);
  });

  it('refuses an answer of shared references describing 2^44 paths', async () => {
    // [L0, ..., L43], L0 = [1, 1], Li = [Q L(i-1), Q L(i-1)] (L(i-1) is reference #i)
    const items: number[] = [0x58, 0xbc, 0x7a, 0x91, 0x91];
    for (let level = 1; level < 44; level++) {
      const ref = level <= 47 ? [0x90 + level] : [0xc8 + (level >> 8), level & 0xff];
      items.push(0x7a, 0x51, ...ref, 0x51, ...ref);
    }
    const fake = await answering(Buffer.from(items));
    const consumer = await consumerOf(fake);
    const codes = await call(consumer, 5);
    expect(codes).toEqual({ Serialization: 5 });
    expect(loggedAbout(consumer, fake.address, 'maxDecodedElements')).toBe(true);
    await expectServedThroughout(consumer);
  });
});
