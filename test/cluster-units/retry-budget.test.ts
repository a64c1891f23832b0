import { describe, expect, it } from 'vitest';
import { createRetryBudget, resolveRetryBudgetOptions } from '../../src/cluster/retry-budget.js';
import { manualClock } from '../support/seeded-random.js';

function drain(budget: ReturnType<typeof createRetryBudget>): number {
  let taken = 0;
  while (budget.tryAcquireRetry()) taken++;
  return taken;
}

describe('retry budget', () => {
  it('allows the reserve (minRetriesPerSecond x window) with no traffic', () => {
    const clock = manualClock();
    const budget = createRetryBudget({ now: clock.now });
    expect(budget.available()).toBe(100);
    expect(drain(budget)).toBe(100);
    expect(budget.available()).toBe(0);
  });

  it('allows ratio x calls on top of the reserve', () => {
    const clock = manualClock();
    const budget = createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 0, now: clock.now });
    for (let i = 0; i < 1_000; i++) budget.recordCall();
    expect(drain(budget)).toBe(200);
    for (let i = 0; i < 5; i++) budget.recordCall();
    expect(drain(budget)).toBe(1);
    for (let i = 0; i < 4; i++) budget.recordCall();
    expect(drain(budget)).toBe(0);
  });

  it('slides: calls and retries older than the window no longer count', () => {
    const clock = manualClock(0);
    const budget = createRetryBudget({
      ratio: 0.5,
      minRetriesPerSecond: 1,
      windowMs: 10_000,
      now: clock.now,
    });
    for (let i = 0; i < 100; i++) budget.recordCall();
    expect(drain(budget)).toBe(60); // 0.5 x 100 + 1 x 10
    clock.advance(5_000);
    expect(budget.tryAcquireRetry()).toBe(false);
    clock.advance(5_000); // the calls and the retries left the window together
    expect(budget.available()).toBe(10);
    for (let i = 0; i < 10; i++) budget.recordCall();
    expect(drain(budget)).toBe(15);
  });

  it('limits a retry storm to about the ratio of the traffic', () => {
    const clock = manualClock(0);
    const budget = createRetryBudget({ now: clock.now });
    let calls = 0;
    let retries = 0;
    // 60 s of 1000 calls/s, every call failing and wanting retries.
    for (let ms = 0; ms < 60_000; ms++) {
      clock.set(ms);
      budget.recordCall();
      calls++;
      for (let attempt = 0; attempt < 3 && budget.tryAcquireRetry(); attempt++) retries++;
    }
    expect(retries / calls).toBeGreaterThan(0.2);
    expect(retries / calls).toBeLessThan(0.2 + 200 / calls + 0.01);
  });

  it('validates options', () => {
    expect(() => resolveRetryBudgetOptions({ ratio: -1 })).toThrow(/ratio/);
    expect(() => resolveRetryBudgetOptions({ windowMs: 0 })).toThrow(/windowMs/);
  });
});
