/**
 * Retry delays as a caller lives them, over real sockets: with `retry: 'exponential'` the waits between
 * the attempts of one call grow (full jitter draws each in [0, ceiling), the ceiling doubling from
 * `retryDelayMs`); with `fixed` they stay at `retryDelayMs`. Only lower bounds on what was observed are
 * asserted, so a loaded machine (slower, never faster) cannot fail it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll } from '../support/apps.js';
import { attemptGaps } from '../support/attempt-gaps.js';

afterEach(closeAll);

const CALLS = 20;
const BASE_MS = 50;

describe('retry backoff between attempts', () => {
  it('exponential: the waits grow attempt after attempt (the third can reach 4× the first delay)', async () => {
    const gaps = await attemptGaps({
      providers: 4,
      calls: CALLS,
      reference: {
        retries: 3,
        timeoutMs: 10_000,
        retry: 'exponential',
        retryDelayMs: BASE_MS,
        retryMaxDelayMs: 10_000,
      },
    });
    expect(gaps).toHaveLength(CALLS);
    for (const call of gaps) expect(call).toHaveLength(3);
    // full jitter: the third wait is drawn below 4 × 50 ms; some of 20 land above 2 × 50 ms (p ≈ 1 − 2⁻²⁰)
    const third = gaps.map((call) => call[2]!);
    expect(Math.max(...third)).toBeGreaterThan(2 * BASE_MS);
    const first = gaps.map((call) => call[0]!);
    expect(Math.max(...third)).toBeGreaterThan(Math.max(...first));
  });

  it('fixed: every wait is the delay', async () => {
    const gaps = await attemptGaps({
      providers: 4,
      calls: CALLS,
      reference: { retries: 3, timeoutMs: 10_000, retry: 'fixed', retryDelayMs: BASE_MS },
    });
    for (const call of gaps) for (const gap of call) expect(gap).toBeGreaterThanOrEqual(BASE_MS - 2);
  });
});
