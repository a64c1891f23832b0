/**
 * `fixed`: the same delay (`baseDelayMs`, 0 for an immediate retry as Dubbo's failover does) before every
 * further attempt, up to `maxAttempts` attempts and within `budgetMs`.
 */
import { type RetryOptions, type RetryPolicy, withinLimits } from './retry-policy.js';

export function createFixedRetryPolicy(options: RetryOptions): RetryPolicy {
  const delay = options.baseDelayMs;
  return {
    nextDelayMs(attempt, elapsedMs) {
      return withinLimits(options, attempt, elapsedMs, delay);
    },
  };
}
