/**
 * Issue 23: a leaky-bucket rate limit (`limits.rate: { kind: 'leaky', perSecond, queue }`) over real
 * sockets: a burst of calls is smoothed (the provider starts them one every 1000 / perSecond ms, in
 * the order they came), at most `queue` wait for their turn, and the rest are refused `Overloaded`
 * without running. Start times are the provider's own, measured in its handler.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

const Steady = defineService<{ work(n: number): Promise<number> }>('test.Steady', {
  methods: { work: {} },
});

const PER_SECOND = 20; // one call every 50 ms
const SPACING_MS = 1000 / PER_SECOND;
const QUEUE = 5;

async function steadyProvider(limits: unknown) {
  const starts: Array<{ n: number; at: number }> = [];
  const app = await testApp();
  app.provide(
    Steady,
    {
      work: (n) => {
        starts.push({ n, at: performance.now() });
        return n;
      },
    },
    { limits } as never,
  );
  await app.start();
  return { url: app.address!, starts };
}

describe('leaky-bucket rate limit (provider)', () => {
  it('smooths a burst to the steady rate, queues up to its bound and refuses the excess Overloaded', async () => {
    const p = await steadyProvider({ rate: { kind: 'leaky', perSecond: PER_SECOND, queue: QUEUE } });
    const consumer = await testApp({ consumer: { retries: 0, timeoutMs: 10_000 } });
    const ref = consumer.refer(Steady, { url: p.url });
    expect(await ref.work(-1)).toBe(-1); // connected; and the bucket's next turn is 50 ms away at most
    p.starts.length = 0;
    const burst = 12;
    const sentAt = performance.now();
    const outcomes = await Promise.allSettled(Array.from({ length: burst }, (_, n) => ref.work(n)));
    const served = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as RpcError] : []));
    // one leaves at once (or right after the warm-up call's turn), QUEUE wait: the rest are refused
    expect(served.length).toBeGreaterThanOrEqual(QUEUE);
    expect(served.length).toBeLessThanOrEqual(QUEUE + 1);
    expect(refused.length).toBe(burst - served.length);
    for (const error of refused) {
      expect(RpcError.is(error)).toBe(true);
      expect(error.code).toBe('Overloaded');
      expect(error.message).toMatch(/20 calls\/s \(leaky, queue 5\): its queue of waiting calls is full/);
    }
    // the refused never ran; the served ran in the order they came, one every SPACING_MS
    expect(p.starts.length).toBe(served.length);
    expect(p.starts.map((s) => s.n)).toEqual([...p.starts.map((s) => s.n)].sort((a, b) => a - b));
    // the n-th of them starts no earlier than n spacings after the burst was sent (timers never fire
    // early; a loaded machine can only make them later, so this holds however busy the host is)
    p.starts.forEach((start, n) => {
      const after = start.at - sentAt;
      expect(after, `start ${n}: ${after.toFixed(1)} ms after the burst`).toBeGreaterThanOrEqual(
        n * SPACING_MS - 5,
      );
    });
    // and the bucket drains: a call after the queue emptied is served
    const later = await ref.work(100);
    expect(later).toBe(100);
  });

  it('refuses a leaky rate with a token-bucket burst with a ConfigError naming the key', async () => {
    const app = await testApp();
    expect(() =>
      app.provide(Steady, { work: (n) => n }, {
        limits: { rate: { kind: 'leaky', perSecond: 5, burst: 3 } },
      } as never),
    ).toThrow(/limits\.rate/);
  });
});
