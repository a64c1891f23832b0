/** `none`: never retry (Dubbo's failfast). */
import type { RetryOptions, RetryPolicy } from './retry-policy.js';

const NO_RETRY: RetryPolicy = { nextDelayMs: () => undefined };

export function createNoRetryPolicy(_options?: RetryOptions): RetryPolicy {
  return NO_RETRY;
}
