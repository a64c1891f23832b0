/**
 * `exponential`: backoff whose ceiling grows by `multiplier` per attempt, from `baseDelayMs` up to
 * `maxDelayMs`, with jitter so that callers that failed together do not retry together:
 * `full` draws in [0, ceiling), `equal` in [ceiling/2, ceiling), `none` waits the ceiling itself.
 * Up to `maxAttempts` attempts, within `budgetMs`.
 */
import { type RetryOptions, type RetryPolicy, withinLimits } from './retry-policy.js';

/** The delay ceiling after `attempt` attempts, before jitter. */
export function backoffCeiling(options: RetryOptions, attempt: number): number {
  const exponent = attempt > 1 ? attempt - 1 : 0;
  return Math.min(options.maxDelayMs, options.baseDelayMs * options.multiplier ** exponent);
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
