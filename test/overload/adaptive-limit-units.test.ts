/**
 * The adaptive concurrency limit's arithmetic (governance/adaptive-limit.ts) and its admission by
 * priority (governance/concurrency-limiter.ts), on a scripted clock: windows of 10 calls over 120 ms each.
 */
import { describe, expect, it } from 'vitest';
import { createAdaptiveLimit } from '../../src/governance/adaptive-limit.js';
import type { CallPriority } from '../../src/governance/call-priority.js';
import { createConcurrencyLimiter } from '../../src/governance/concurrency-limiter.js';

/** Feeds `windows` windows of 10 samples of `rttMs` each with `inflight` in flight; returns the clock. */
function feed(
  limit: ReturnType<typeof createAdaptiveLimit>,
  from: number,
  windows: number,
  rttMs: number,
  inflight: number,
): number {
  let now = from;
  for (let w = 0; w < windows; w++) {
    for (let i = 0; i < 10; i++) {
      now += 12;
      limit.record(rttMs, inflight, now);
    }
  }
  return now;
}

describe('the adaptive limit', () => {
  it('grows while latency is flat and the limit is used, by about √limit per window (smoothed)', () => {
    const limit = createAdaptiveLimit({ initialLimit: 100 });
    let now = feed(limit, 0, 1, 5, 100);
    expect(limit.longRttMs).toBe(5);
    const before = limit.limit;
    now = feed(limit, now, 10, 5, 100);
    expect(limit.limit).toBeGreaterThan(before + 10);
    // a limit nobody uses (fewer than half of it in flight) does not grow
    now = feed(limit, now, 1, 5, 10);
    const unused = limit.limit;
    feed(limit, now, 10, 5, 10);
    expect(limit.limit).toBe(unused);
  });

  it('shrinks when latency rises, from the calls actually in flight, and stops at minLimit', () => {
    const limit = createAdaptiveLimit({ initialLimit: 10_000 });
    let now = feed(limit, 0, 1, 5, 200);
    expect(limit.limit).toBe(10_000);
    // queueing: 200 ms against a long latency of ~5 ms; 200 were in flight
    now = feed(limit, now, 1, 200, 200);
    expect(limit.limit).toBeLessThanOrEqual(200);
    const first = limit.limit;
    now = feed(limit, now, 5, 200, first);
    expect(limit.limit).toBeLessThan(first * 0.7);
    // as long as the calls in flight fill the limit and queue, it keeps falling, to minLimit
    for (let w = 0; w < 40; w++) now = feed(limit, now, 1, 200, limit.limit);
    expect(limit.limit).toBe(20);
  });

  it('queueing below the slack (and within 1.5× the long latency) does not shrink it', () => {
    const limit = createAdaptiveLimit({ initialLimit: 100 });
    let now = feed(limit, 0, 1, 2, 100);
    now = feed(limit, now, 5, 2 * 1.5 + 19, 100);
    expect(limit.limit).toBeGreaterThanOrEqual(100);
    feed(limit, now, 5, 2 * 1.5 + 40, 100);
    expect(limit.limit).toBeLessThan(100);
  });

  it('stays within [minLimit, maxLimit]', () => {
    const limit = createAdaptiveLimit({ initialLimit: 50, minLimit: 30, maxLimit: 60 });
    let now = feed(limit, 0, 1, 5, 50);
    now = feed(limit, now, 100, 5, 60);
    expect(limit.limit).toBe(60);
    feed(limit, now, 20, 1_000, 60);
    expect(limit.limit).toBe(30);
  });

  it('adds the event loop delay to each window', () => {
    let delay = 0;
    const limit = createAdaptiveLimit({ initialLimit: 100 }, () => delay);
    const now = feed(limit, 0, 1, 5, 100);
    delay = 100;
    feed(limit, now, 3, 5, 100);
    expect(limit.shortRttMs).toBe(105);
    expect(limit.limit).toBeLessThan(100);
  });
});

/**
 * A limiter whose gate has seen the provider overloaded (a saturated loop, scripted; the mean queue
 * went from 1 call to 32 between two intervals), with nothing in flight, at time 200 ms.
 */
function overloadedLimiter(): ReturnType<typeof createConcurrencyLimiter> {
  const limiter = createConcurrencyLimiter({
    initialLimit: 100,
    eventLoopDelay: false,
    utilisation: () => 1,
    overload: { confirmIntervals: 1 },
  });
  const any = () => 'default' as const;
  limiter.acquire(any, undefined, 0);
  for (let i = 0; i < 31; i++) limiter.acquire(any, undefined, 100);
  limiter.acquire(any, undefined, 200);
  expect(limiter.overloaded).toBe(true);
  for (let i = 0; i < 33; i++) limiter.release(undefined, 200);
  return limiter;
}

describe('admission by priority', () => {
  const priority = (p: CallPriority) => () => p;

  it('while overloaded: admits anything below 80 % of the limit, sheddable calls no further, default up to the limit, critical up to 1.5×', () => {
    const limiter = overloadedLimiter();
    const refusedBefore = limiter.refused;
    const admit = (p: CallPriority) => limiter.acquire(priority(p), undefined, 250);
    for (let i = 0; i < 80; i++) expect(admit('sheddable')).toBe(true);
    expect(admit('sheddable')).toBe(false);
    for (let i = 80; i < 100; i++) expect(admit('default')).toBe(true);
    expect(admit('default')).toBe(false);
    for (let i = 100; i < 150; i++) expect(admit('critical')).toBe(true);
    expect(admit('critical')).toBe(false);
    expect(limiter.inflight).toBe(150);
    expect(limiter.refused - refusedBefore).toBe(3);
    limiter.release(undefined, 251);
    expect(limiter.inflight).toBe(149);
    limiter.close();
  });

  it('not overloaded (a burst, a closed loop): admits every call, beyond the limit too', () => {
    const limiter = createConcurrencyLimiter({
      initialLimit: 100,
      eventLoopDelay: false,
      utilisation: () => 1,
    });
    for (let i = 0; i < 300; i++) expect(limiter.acquire(priority('sheddable'), undefined, 0)).toBe(true);
    expect(limiter.overloaded).toBe(false);
    expect(limiter.refused).toBe(0);
    expect(limiter.admitted).toBe(300);
    limiter.close();
  });

  it('does not ask for the priority below the open share (the fast path)', () => {
    const limiter = overloadedLimiter();
    let asked = 0;
    const counting = () => {
      asked++;
      return 'default' as const;
    };
    for (let i = 0; i < 80; i++) limiter.acquire(counting, undefined, 250);
    expect(asked).toBe(0);
    limiter.acquire(counting, undefined, 250);
    expect(asked).toBe(1);
  });

  it("when it becomes overloaded, the limit comes down at once to the calls served × the target latency (Little's law)", () => {
    const limiter = createConcurrencyLimiter({
      initialLimit: 10_000,
      eventLoopDelay: false,
      utilisation: () => 1,
      overload: { confirmIntervals: 1 },
    });
    const any = () => 'default' as const;
    // 300 calls arrive, 100 of them end within the interval: 1 per ms; the target latency is the slack
    // (20 ms) before any window
    limiter.acquire(any, undefined, 0);
    for (let i = 0; i < 300; i++) limiter.acquire(any, undefined, 100);
    for (let i = 0; i < 100; i++) limiter.release(undefined, 150);
    limiter.acquire(any, undefined, 150);
    limiter.acquire(any, undefined, 200);
    expect(limiter.overloaded).toBe(true);
    expect(limiter.limit).toBe(20);
    // the 203 in flight: calls are refused until they drained under it
    expect(limiter.acquire(any, undefined, 201)).toBe(false);
  });
});
