/**
 * `retry: 'adaptive'` over real sockets: the wait before a retry follows how long the call's attempts
 * took (delay = clamp(mean attempt time × 2^(n−1), retryDelayMs, retryMaxDelayMs)). Providers fail
 * each attempt after SLOW_MS, so with `adaptive` the gap between two attempts of a call (the failed
 * attempt plus the wait) is at least 2 × SLOW_MS, then 3 × SLOW_MS; with `fixed` and no delay it is
 * one SLOW_MS. Only lower bounds on what was observed are asserted (a loaded machine is slower, never
 * faster), and the upper bound of the delay, which timing cannot show reliably, is checked by
 * test/cluster-units/retry-policy.test.ts.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type ReferenceOptions, RpcError } from '../../src/index.js';
import { FlakyDef, type FlakyService } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

const CALLS = 5;
const SLOW_MS = 60;

/** Per call, the gaps between the starts of its attempts (ms), from the providers' clock (one process). */
async function attemptGaps(options: ReferenceOptions<FlakyService>): Promise<number[][]> {
  const seen = new Map<string, number[]>();
  const addresses = await Promise.all(
    Array.from({ length: 3 }, async (_, i) => {
      const app = await testApp({ application: `p${i}` });
      app.provide(FlakyDef, {
        async read(key) {
          seen.set(key, [...(seen.get(key) ?? []), performance.now()]);
          await delay(SLOW_MS); // the scripted fault: a provider that fails slowly
          throw new RpcError('Overloaded', `p${i} is overloaded`);
        },
        write: async (key) => key,
        budget: async () => 0,
      });
      await app.start();
      return app.address!;
    }),
  );
  const consumer = await testApp({ application: 'consumer' });
  const ref = consumer.refer(FlakyDef, {
    url: addresses,
    retries: 2,
    timeoutMs: 20_000,
    outlierDetection: false,
    ...options,
  });
  await Promise.all(
    Array.from({ length: CALLS }, (_, i) =>
      ref.read(`k${i}`).then(
        () => expect.unreachable('every provider is overloaded'),
        (error: unknown) => expect(RpcError.from(error).code).toBe('Overloaded'),
      ),
    ),
  );
  return [...seen.values()].map((times) => times.slice(1).map((time, i) => time - times[i]!));
}

describe("retry: 'adaptive'", () => {
  it('waits as long as the attempts took, doubling per attempt', async () => {
    const gaps = await attemptGaps({ retry: 'adaptive', retryMaxDelayMs: 10_000 });
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
