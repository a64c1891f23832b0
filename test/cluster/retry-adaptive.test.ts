import { afterEach, describe, expect, it } from 'vitest';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { attemptGaps } from '../support/attempt-gaps.js';

afterEach(closeAll);

const CALLS = 5;
const SLOW_MS = 60;

describe("retry: 'adaptive'", () => {
  it('waits as long as the attempts took, doubling per attempt', async () => {
    const gaps = await attemptGaps({
      providers: 3,
      calls: CALLS,
      failAfterMs: SLOW_MS,
      reference: {
        retries: 2,
        timeoutMs: 20_000,
        outlierDetection: false,
        retry: 'adaptive',
        retryMaxDelayMs: 10_000,
      },
    });
    expect(gaps).toHaveLength(CALLS);
    for (const [first, second] of gaps) {
      // attempt (≥ SLOW_MS) + wait (≥ mean 1 × SLOW_MS); then attempt + wait (≥ 2 × SLOW_MS)
      expect(first).toBeGreaterThanOrEqual(2 * SLOW_MS - 5);
      expect(second).toBeGreaterThanOrEqual(3 * SLOW_MS - 5);
    }
  });

  it('is refused when misspelt, naming the policies', async () => {
    const consumer = await testApp({ application: 'consumer' });
    expect(() => consumer.refer(FlakyDef, { url: '127.0.0.1:1', retry: 'adaptiv' as never })).toThrow(
      /adaptive/,
    );
  });
});
