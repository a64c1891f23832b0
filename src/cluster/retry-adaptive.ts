/**
 * `adaptive`: the delay follows how long this call's attempts have been taking. After `n` failed
 * attempts whose mean response time (start to failure) is `m` ms:
 *
 *   delay = min(maxDelayMs, max(baseDelayMs, m × multiplier^(n−1)))
 *
 * (`retryDelayMs`, `retryMaxDelayMs`, multiplier 2). A provider that refuses at once (`Overloaded` in a
 * millisecond) is retried almost at once, elsewhere; one that fails slowly (a timeout, a provider
 * struggling) is given at least as long as it took, doubling per attempt, never more than `maxDelayMs`.
 * No jitter: the response times already differ per call. Up to `maxAttempts` attempts, within
 * `budgetMs`. Without observations (a caller of the policy that passes none) it waits `baseDelayMs`.
 */
import { type RetryObservations, type RetryOptions, type RetryPolicy, withinLimits } from './retry-policy.js';

/** The delay of `adaptive` after `attempt` failed attempts taking `meanAttemptMs` on average. */
export function adaptiveDelayMs(options: RetryOptions, attempt: number, meanAttemptMs: number): number {
  const grown = meanAttemptMs * options.multiplier ** Math.max(0, attempt - 1);
  return Math.min(options.maxDelayMs, Math.max(options.baseDelayMs, grown));
}

export function createAdaptiveRetryPolicy(options: RetryOptions): RetryPolicy {
  return {
    nextDelayMs(attempt, elapsedMs, observed?: RetryObservations) {
      const delay = adaptiveDelayMs(options, attempt, observed?.meanAttemptMs ?? 0);
      return withinLimits(options, attempt, elapsedMs, delay);
    },
  };
}
