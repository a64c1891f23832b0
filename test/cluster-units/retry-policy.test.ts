import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/app/config/callisto-config.js';
import { createAdaptiveRetryPolicy } from '../../src/cluster/retry-adaptive.js';
import { backoffCeiling, createExponentialRetryPolicy } from '../../src/cluster/retry-exponential.js';
import { createFixedRetryPolicy } from '../../src/cluster/retry-fixed.js';
import { createNoRetryPolicy } from '../../src/cluster/retry-none.js';
import {
  DEFAULT_RETRY_OPTIONS,
  type RetryPolicy,
  resolveRetryOptions,
} from '../../src/cluster/retry-policy.js';
import { retryPolicyFor } from '../../src/consumer/method-cluster.js';
import { builtinExtensions } from '../../src/extend.js';
import { seededRandom } from '../support/seeded-random.js';

/** Delays the policy gives for attempts 1, 2, ... until it stops, with time passing by the delays. */
function delays(policy: RetryPolicy, attemptMs = 0): number[] {
  const out: number[] = [];
  let elapsed = attemptMs;
  for (let attempt = 1; attempt < 1000; attempt++) {
    const delay = policy.nextDelayMs(attempt, elapsed);
    if (delay === undefined) break;
    out.push(delay);
    elapsed += delay + attemptMs;
  }
  return out;
}

describe('retry policies', () => {
  it('are registered under none, fixed, exponential and adaptive', () => {
    expect(builtinExtensions.names('retry').sort()).toEqual(['adaptive', 'exponential', 'fixed', 'none']);
    const policy = builtinExtensions.get('retry', 'fixed')(resolveRetryOptions({ baseDelayMs: 5 }));
    expect(policy.nextDelayMs(1, 0)).toBe(5);
  });

  it('adaptive waits the mean attempt time, doubling per attempt, within retryDelayMs and retryMaxDelayMs', () => {
    const policy = createAdaptiveRetryPolicy(
      resolveRetryOptions({ maxAttempts: 5, baseDelayMs: 10, maxDelayMs: 500 }),
    );
    expect(policy.nextDelayMs(1, 0, { meanAttemptMs: 40 })).toBe(40);
    expect(policy.nextDelayMs(2, 0, { meanAttemptMs: 40 })).toBe(80);
    expect(policy.nextDelayMs(3, 0, { meanAttemptMs: 40 })).toBe(160);
    expect(policy.nextDelayMs(4, 0, { meanAttemptMs: 400 })).toBe(500); // bounded above
    expect(policy.nextDelayMs(1, 0, { meanAttemptMs: 1 })).toBe(10); // bounded below
    expect(policy.nextDelayMs(1, 0)).toBe(10); // nothing observed: the base
    expect(policy.nextDelayMs(5, 0, { meanAttemptMs: 1 })).toBeUndefined(); // attempts used up
  });

  it('none never retries', () => {
    expect(delays(createNoRetryPolicy(DEFAULT_RETRY_OPTIONS))).toEqual([]);
  });

  it('fixed waits the same delay, up to maxAttempts attempts in all', () => {
    expect(delays(createFixedRetryPolicy(resolveRetryOptions()))).toEqual([100, 100]);
    expect(delays(createFixedRetryPolicy(resolveRetryOptions({ maxAttempts: 5, baseDelayMs: 0 })))).toEqual([
      0, 0, 0, 0,
    ]);
    expect(delays(createFixedRetryPolicy(resolveRetryOptions({ maxAttempts: 1 })))).toEqual([]);
  });

  it('fixed stops when the next attempt would start past the budget', () => {
    const policy = createFixedRetryPolicy(
      resolveRetryOptions({ maxAttempts: 100, baseDelayMs: 100, budgetMs: 1_000 }),
    );
    // attempts take 150 ms: retries start at 250, 500, 750; the next would start at 1000.
    expect(delays(policy, 150)).toEqual([100, 100, 100]);
    expect(policy.nextDelayMs(1, 899)).toBe(100);
    expect(policy.nextDelayMs(1, 900)).toBeUndefined();
  });

  it('exponential without jitter doubles from the base up to the max', () => {
    const options = resolveRetryOptions({
      maxAttempts: 10,
      jitter: 'none',
      baseDelayMs: 100,
      maxDelayMs: 3_000,
    });
    expect(delays(createExponentialRetryPolicy(options))).toEqual([
      100, 200, 400, 800, 1600, 3000, 3000, 3000, 3000,
    ]);
    expect(backoffCeiling({ ...options, multiplier: 3 }, 3)).toBe(900);
    expect(backoffCeiling(options, 10_000)).toBe(3_000);
  });

  it('exponential backs off from 100 ms when its base is 0, as with the consumer defaults', () => {
    const options = resolveRetryOptions({
      maxAttempts: 5,
      jitter: 'none',
      baseDelayMs: 0,
      maxDelayMs: 1_000,
    });
    expect(delays(createExponentialRetryPolicy(options))).toEqual([100, 200, 400, 800]);
    expect(backoffCeiling({ ...options, maxDelayMs: 50 }, 1)).toBe(50);
    // What `retry: 'exponential'` gets from the default consumer config (retryDelayMs 0, full jitter).
    const control = retryPolicyFor(builtinExtensions, { ...DEFAULT_CONFIG.consumer, retry: 'exponential' });
    const first = Array.from({ length: 2_000 }, () => control.nextDelayMs(1, 0)!);
    const second = Array.from({ length: 2_000 }, () => control.nextDelayMs(2, 0)!);
    expect(Math.max(...first)).toBeLessThan(100);
    expect(first.reduce((a, b) => a + b) / first.length).toBeGreaterThan(40); // uniform in [0, 100): ~50
    expect(Math.max(...second)).toBeGreaterThan(100);
    expect(Math.max(...second)).toBeLessThan(200);
  });

  it('exponential with full jitter draws in [0, ceiling), averaging half of it', () => {
    const options = resolveRetryOptions({ maxAttempts: 4, jitter: 'full', random: seededRandom(11) });
    const policy = createExponentialRetryPolicy(options);
    for (const attempt of [1, 2, 3]) {
      const ceiling = backoffCeiling(options, attempt);
      let sum = 0;
      for (let i = 0; i < 10_000; i++) {
        const d = policy.nextDelayMs(attempt, 0)!;
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(ceiling);
        sum += d;
      }
      expect(Math.abs(sum / 10_000 / ceiling - 0.5)).toBeLessThan(0.02);
    }
    expect(policy.nextDelayMs(4, 0)).toBeUndefined();
  });

  it('exponential with equal jitter draws in [ceiling/2, ceiling)', () => {
    const options = resolveRetryOptions({ maxAttempts: 9, jitter: 'equal', random: seededRandom(12) });
    const policy = createExponentialRetryPolicy(options);
    for (let i = 0; i < 10_000; i++) {
      const attempt = 1 + (i % 8);
      const ceiling = backoffCeiling(options, attempt);
      const d = policy.nextDelayMs(attempt, 0)!;
      expect(d).toBeGreaterThanOrEqual(ceiling / 2);
      expect(d).toBeLessThan(ceiling);
    }
  });

  it('exponential honours the time budget', () => {
    const options = resolveRetryOptions({
      maxAttempts: 50,
      jitter: 'none',
      budgetMs: 1_000,
      baseDelayMs: 100,
    });
    // starts: 0, 100, 300, 700 -> the next would start at 1500.
    expect(delays(createExponentialRetryPolicy(options))).toEqual([100, 200, 400]);
  });

  it('validates options, naming the key, the value and what was expected', () => {
    expect(() => resolveRetryOptions({ maxAttempts: 0 })).toThrow(
      /retry.maxAttempts = 0; expected an integer >= 1/,
    );
    expect(() => resolveRetryOptions({ budgetMs: 0 })).toThrow(/budgetMs/);
    expect(() => resolveRetryOptions({ baseDelayMs: 500, maxDelayMs: 100 })).toThrow(/maxDelayMs/);
    expect(() => resolveRetryOptions({ multiplier: 0.5 })).toThrow(/multiplier/);
    expect(() => resolveRetryOptions({ jitter: 'some' as never })).toThrow(/jitter/);
    expect(resolveRetryOptions()).toEqual(DEFAULT_RETRY_OPTIONS);
  });
});
