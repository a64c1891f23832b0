/**
 * Hostile answers, against a consumer process: a fake provider (in this process) answers the
 * consumer's calls with what a hostile provider would send, while the consumer keeps calling a
 * well-behaved provider (a real Callisto app, also in this process). Element bombs, answers in another
 * serializer than asked (a v8 bomb), compressed answers it did not ask for or that inflate too far,
 * frames that never finish, a partial-frame budget across many providers, header claims, ping floods.
 */
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_INFLATE_RATIO } from '../../src/protocol/compression.js';
import { PONG_QUEUE_LIMIT_BYTES } from '../../src/protocol/framed-connection.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { createTargetImpl, TargetDef } from './fixtures/target-service.js';
import { expectWithinBound } from './support/bounds.js';
import { closeFakeProviders, type FakeProvider, startFakeProvider } from './support/fake-provider.js';
import {
  claim,
  deflate,
  emptyMaps,
  FrameFlag,
  FrameKind,
  msgpack,
  ping,
  response,
  SERIALIZER,
  V8_HUGE_ARRAY,
} from './support/frames.js';
import {
  type ConsumerTargetOptions,
  killTargets,
  MiB,
  startConsumerTarget,
  type Target,
} from './support/targets.js';

afterEach(async () => {
  await closeFakeProviders();
  await closeAll();
  await killTargets();
});

/** A well-behaved provider in this process. */
async function goodProvider(): Promise<string> {
  const app = await testApp({ application: 'good-provider' });
  app.provide(TargetDef, createTargetImpl().impl);
  await app.start();
  return app.address!;
}

/** A consumer process calling `hostile` and, every 20 ms, a good provider. */
async function consumerOf(
  hostile: FakeProvider[],
  options: Partial<ConsumerTargetOptions> = {},
): Promise<Target> {
  const consumer = await startConsumerTarget({
    hostile: hostile.map((fake) => fake.address),
    good: await goodProvider(),
    ...options,
  });
  consumer.tell('good');
  return consumer;
}

/** `call <n>` on every hostile reference; the outcomes counted by code. */
async function call(consumer: Target, count: number): Promise<Record<string, number>> {
  return JSON.parse(await consumer.ask(`call ${count}`, 'RESULT')) as Record<string, number>;
}

interface GoodStats {
  sent: number;
  ok: number;
  failed: number;
  wrong: number;
  slowestMs: number;
  errors: string[];
}

async function expectServedThroughout(consumer: Target): Promise<void> {
  // An attack can be over within one tick of the good client's timer: let it be served at least once.
  await waitFor(
    async () => (JSON.parse(await consumer.ask('good-stats', 'GOOD')) as GoodStats).ok > 0,
    10_000,
    { intervalMs: 50 },
  );
  await consumer.ask('good-stop', 'GOOD-STOPPED');
  const stats = await waitFor(
    async () => {
      const s = JSON.parse(await consumer.ask('good-stats', 'GOOD')) as GoodStats;
      return s.ok + s.failed + s.wrong === s.sent ? s : undefined;
    },
    10_000,
    { intervalMs: 50 },
  );
  expect(stats, JSON.stringify(stats)).toMatchObject({ failed: 0, wrong: 0 });
  expect(stats.ok).toBeGreaterThan(0);
  expect(stats.slowestMs).toBeLessThan(3_000);
  expect(consumer.exited).toBe(false);
}

function loggedAbout(target: Target, ...parts: string[]): boolean {
  return target.logs().some((line) => parts.every((part) => line.includes(part)));
}

/** A fake provider that answers every request with `answer(id)`, counting the bytes it sent. */
async function answering(answer: (id: number) => Buffer): Promise<FakeProvider & { sent: () => number }> {
  let sent = 0;
  const fake = await startFakeProvider({
    onRequest(socket, request) {
      const bytes = answer(request.requestId);
      sent += bytes.length;
      socket.write(bytes);
    },
  });
  return Object.assign(fake, { sent: () => sent });
}

const msgpackString = (bytes: number): Buffer => Buffer.from(msgpack.encode('x'.repeat(bytes)));

describe('hostile: answers to a consumer', () => {
  it('refuses an answer of more elements than maxDecodedElements before decoding it', async () => {
    const bomb = emptyMaps(2_000_000); // 2 MB, 128 MB of empty objects once decoded
    const fake = await answering((id) => response(id, bomb));
    const consumer = await consumerOf([fake]);
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 10);
    const after = await consumer.peak();
    expectWithinBound({ name: 'msgpack element bomb (consumer)', before, after, sentBytes: fake.sent() });
    expect(codes).toEqual({ Serialization: 10 });
    expect(loggedAbout(consumer, fake.address, 'maxDecodedElements')).toBe(true);
    await expectServedThroughout(consumer);
  });

  it('accepts an answer only in the serializer it called in (a v8 answer to a msgpack call)', async () => {
    const fake = await answering((id) => response(id, V8_HUGE_ARRAY, { serializer: SERIALIZER.v8 }));
    const consumer = await consumerOf([fake]);
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 6);
    const after = await consumer.peak();
    expectWithinBound({
      name: 'v8 answer to a msgpack call (consumer)',
      before,
      after,
      sentBytes: fake.sent(),
    });
    // the first refused answer closes the connection: the calls still waiting on it fail with Network
    expect(codes.Serialization).toBeGreaterThanOrEqual(1);
    expect((codes.Serialization ?? 0) + (codes.Network ?? 0)).toBe(6);
    await waitFor(() => fake.closed >= 1, 5_000);
    expect(loggedAbout(consumer, fake.address, 'serializer')).toBe(true);
    await expectServedThroughout(consumer);
  });

  it('refuses compressed answers when it did not ask for them (compression off)', async () => {
    const body = deflate(msgpackString(8 * MiB - 1024), 1); // ~36 KB -> 8 MB, ratio under 256
    const fake = await answering((id) => response(id, body, { flags: FrameFlag.Compressed }));
    const consumer = await consumerOf([fake]);
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 10);
    const after = await consumer.peak();
    expectWithinBound({
      name: 'compressed answer, compression off (consumer)',
      before,
      after,
      sentBytes: fake.sent(),
    });
    expect(codes).toEqual({ Serialization: 10 });
    await expectServedThroughout(consumer);
  });

  it('bounds how far a compressed answer inflates when compression is on (maxInflateRatio)', async () => {
    const body = deflate(msgpackString(8 * MiB - 1024), 9); // ~8 KB -> 8 MB
    const fake = await answering((id) => response(id, body, { flags: FrameFlag.Compressed }));
    const consumer = await consumerOf([fake], { config: { compressThresholdBytes: 1024 } });
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 10);
    const after = await consumer.peak();
    expectWithinBound({
      name: 'deflate bomb answer, compression on (consumer)',
      before,
      after,
      sentBytes: fake.sent(),
      allowedBytes: DEFAULT_MAX_INFLATE_RATIO * fake.sent(),
    });
    expect(codes).toEqual({ Serialization: 10 });
    expect(loggedAbout(consumer, fake.address, 'maxInflateRatio')).toBe(true);
    await expectServedThroughout(consumer);
  });

  it('closes a connection whose answer frame is not complete within frameTimeoutMs', async () => {
    const trickling = new Set<net.Socket>();
    const fake = await startFakeProvider({
      onRequest(socket, request) {
        socket.write(claim(FrameKind.Response, request.requestId, 10_000, 10));
        trickling.add(socket);
      },
    });
    const trickle = setInterval(() => {
      for (const socket of trickling) if (!socket.destroyed) socket.write(Buffer.from([0x80]));
    }, 100);
    try {
      const consumer = await consumerOf([fake], { config: { frameTimeoutMs: 1_000 }, timeoutMs: 30_000 });
      const codes = await call(consumer, 1);
      expect(codes).toEqual({ Network: 1 });
      await waitFor(() => fake.closed === 1, 5_000); // the consumer closed it (seen here a moment later)
      expect(loggedAbout(consumer, fake.address, 'frameTimeoutMs')).toBe(true);
      await expectServedThroughout(consumer);
    } finally {
      clearInterval(trickle);
    }
  });

  it('shares one partial-frame budget among its connections to all providers', async () => {
    const budget = 8 * MiB;
    const part = claim(FrameKind.Response, 0, 4 * MiB, 3 * MiB);
    const fakes = await Promise.all(
      Array.from({ length: 40 }, () =>
        startFakeProvider({
          onRequest(socket, request) {
            part.writeUInt32BE(request.requestId, 8);
            socket.write(Buffer.from(part));
          },
        }),
      ),
    );
    const consumer = await consumerOf(fakes, { config: { maxPartialFrameBytes: budget }, timeoutMs: 1_500 });
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 1);
    const after = await consumer.peak();
    expectWithinBound({
      name: 'partial-frame budget (consumer)',
      before,
      after,
      sentBytes: part.length * fakes.length,
      allowedBytes: budget + fakes.length * 16 * 1024,
      perByteSent: 0,
    });
    // beyond the budget the consumer closes the connection (Network); within it, calls time out
    expect(codes.Network).toBeGreaterThanOrEqual(30);
    expect(loggedAbout(consumer, 'maxPartialFrameBytes'), consumer.logs().join('\n')).toBe(true);
    await expectServedThroughout(consumer);
  });

  it('allocates a partial answer as its bytes arrive, never from the length its header claims', async () => {
    const fakes = await Promise.all(
      Array.from({ length: 100 }, () =>
        startFakeProvider({
          onRequest(socket, request) {
            socket.write(claim(FrameKind.Response, request.requestId, 8 * MiB - 100, 30));
          },
        }),
      ),
    );
    const consumer = await consumerOf(fakes, {
      config: { maxPartialFrameBytes: 16 * 1024 * MiB },
      timeoutMs: 1_000,
    });
    const before = await consumer.resetPeak();
    const codes = await call(consumer, 1);
    const after = await consumer.peak(); // the partial frames are still held: the calls only timed out
    expectWithinBound({
      name: '8 MiB answer claims (consumer)',
      before,
      after,
      sentBytes: 50 * fakes.length,
      measure: 'arrayBuffers',
    });
    expect(codes).toEqual({ Timeout: 100 });
    await expectServedThroughout(consumer);
  });

  it('does not queue pongs without bound for a provider that floods pings and never reads', async () => {
    let sent = 0;
    let flooded: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      flooded = resolve;
    });
    const burst = Buffer.concat(Array.from({ length: 50_000 }, () => ping(9)));
    const fake = await startFakeProvider({
      onConnect(socket) {
        socket.pause(); // reads nothing, ever
        void (async () => {
          for (let i = 0; i < 100 && !socket.destroyed; i++) {
            await new Promise<void>((resolve) => socket.write(burst, () => resolve()));
            sent += burst.length;
          }
          flooded();
        })();
      },
    });
    const consumer = await consumerOf([fake], { timeoutMs: 500 });
    const before = await consumer.resetPeak();
    await call(consumer, 1); // opens the connection; never answered
    await done; // 5,000,000 pings (100 MB) handed to the kernel: the consumer has read all but the last few
    const after = await consumer.peak();
    expectWithinBound({
      name: 'ping flood (consumer)',
      before,
      after,
      sentBytes: sent,
      allowedBytes: PONG_QUEUE_LIMIT_BYTES,
      perByteSent: 0,
    });
    await expectServedThroughout(consumer);
  });
});
