/**
 * `exponential`: backoff whose ceiling grows by `multiplier` per attempt, from `baseDelayMs` up to
 * `maxDelayMs`, with jitter so that callers that failed together do not retry together:
 * `full` draws in [0, ceiling), `equal` in [ceiling/2, ceiling), `none` waits the ceiling itself.
 * Up to `maxAttempts` attempts, within `budgetMs`. A `baseDelayMs` of 0 (the consumer default
 * `retryDelayMs`, meant for `fixed`'s immediate retry) would never back off: the base is then
 * `DEFAULT_EXPONENTIAL_BASE_MS` (or `maxDelayMs`, if smaller).
 */
import { type RetryOptions, type RetryPolicy, withinLimits } from './retry-policy.js';

/** The first delay ceiling of `exponential` when `baseDelayMs` is 0, ms. */
export const DEFAULT_EXPONENTIAL_BASE_MS = 100;

/** The delay ceiling after `attempt` attempts, before jitter. */
export function backoffCeiling(options: RetryOptions, attempt: number): number {
  const exponent = attempt > 1 ? attempt - 1 : 0;
  const base =
    options.baseDelayMs > 0 ? options.baseDelayMs : Math.min(DEFAULT_EXPONENTIAL_BASE_MS, options.maxDelayMs);
  return Math.min(options.maxDelayMs, base * options.multiplier ** exponent);
}

export function createExponentialRetryPolicy(options: RetryOptions): RetryPolicy {
  const { jitter, random } = options;
  return {
    nextDelayMs(attempt, elapsedMs) {
      if (attempt >= options.maxAttempts) return undefined;
      const ceiling = backoffCeiling(options, attempt);
      const delay =
        jitter === 'full'
          ? random() * ceiling
          : jitter === 'equal'
            ? ceiling / 2 + (random() * ceiling) / 2
            : ceiling;
      return withinLimits(options, attempt, elapsedMs, delay);
    },
  };
}
