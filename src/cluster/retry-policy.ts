/**
 * The retry-policy extension point (kind `retry`): after a failed attempt, how long to wait before the
 * next one, or whether to stop. A policy only decides timing and counts; which failures may be retried
 * at all (never business errors, only idempotent calls after a request was sent, ...) is the cluster
 * invoker's call, and a retry budget (`retry-budget.ts`) caps retries across calls.
 */
import { ConfigError } from '../core/config-error.js';

/** Decides whether and when to retry one call. Stateless between calls: one instance serves them all. */
export interface RetryPolicy {
  /**
   * The delay in ms before the next attempt, or `undefined` to stop. `attempt` is the number of
   * attempts made so far (1 after the first failure); `elapsedMs` the time since the first began.
   */
  nextDelayMs(attempt: number, elapsedMs: number, observed?: RetryObservations): number | undefined;
}

/** What the consumer observed of a call's attempts so far (policies that adapt read it). */
export interface RetryObservations {
  /** The mean response time of the call's attempts so far (start to failure), ms. */
  readonly meanAttemptMs: number;
}

/** Jitter applied to exponential backoff delays (see the AWS Architecture Blog, "Exponential Backoff And Jitter"). */
export type RetryJitter = 'full' | 'equal' | 'none';

export interface RetryOptions {
  /** Attempts in total, the first one included (Dubbo's `retries: 2` is 3 attempts). Default 3. */
  maxAttempts: number;
  /** No attempt starts later than this many ms after the first one began. Default Infinity (only the call's deadline bounds it). */
  budgetMs: number;
  /** `fixed`: the delay between attempts; `exponential`: the first delay, before jitter. Default 100. */
  baseDelayMs: number;
  /** `exponential`: the largest delay, before jitter. Default 10000. */
  maxDelayMs: number;
  /** `exponential`: growth factor per attempt. Default 2. */
  multiplier: number;
  /**
   * `exponential`: `full` draws the delay in [0, d), `equal` in [d/2, d), `none` uses d itself.
   * Default `full`.
   */
  jitter: RetryJitter;
  /** Random source in [0, 1); tests pass a seeded one. Default Math.random. */
  random: () => number;
}

export const DEFAULT_RETRY_OPTIONS: RetryOptions = {
  maxAttempts: 3,
  budgetMs: Number.POSITIVE_INFINITY,
  baseDelayMs: 100,
  maxDelayMs: 10_000,
  multiplier: 2,
  jitter: 'full',
  random: Math.random,
};

export type RetryPolicyFactory = (options: RetryOptions) => RetryPolicy;

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    retry: RetryPolicyFactory;
  }
}

/** Fills `options` from `DEFAULT_RETRY_OPTIONS` and validates every field. */
export function resolveRetryOptions(options: Partial<RetryOptions> = {}): RetryOptions {
  const resolved: RetryOptions = { ...DEFAULT_RETRY_OPTIONS, ...options };
  if (!Number.isInteger(resolved.maxAttempts) || resolved.maxAttempts < 1) {
    invalid('maxAttempts', resolved.maxAttempts, 'an integer >= 1');
  }
  if (!(resolved.budgetMs > 0)) invalid('budgetMs', resolved.budgetMs, 'a number > 0 (Infinity for none)');
  if (!(resolved.baseDelayMs >= 0 && Number.isFinite(resolved.baseDelayMs))) {
    invalid('baseDelayMs', resolved.baseDelayMs, 'a finite number >= 0');
  }
  if (!(resolved.maxDelayMs >= resolved.baseDelayMs && Number.isFinite(resolved.maxDelayMs))) {
    invalid('maxDelayMs', resolved.maxDelayMs, `a finite number >= baseDelayMs (${resolved.baseDelayMs})`);
  }
  if (!(resolved.multiplier >= 1 && Number.isFinite(resolved.multiplier))) {
    invalid('multiplier', resolved.multiplier, 'a finite number >= 1');
  }
  if (!['full', 'equal', 'none'].includes(resolved.jitter)) {
    invalid('jitter', resolved.jitter, `one of 'full', 'equal', 'none'`);
  }
  if (typeof resolved.random !== 'function')
    invalid('random', resolved.random, 'a function returning [0, 1)');
  return resolved;
}

/**
 * The checks every policy shares: `delayMs` if another attempt is allowed after `attempt` attempts and
 * `elapsedMs`, otherwise `undefined` (attempts used up, or the attempt would start past the budget).
 */
export function withinLimits(
  options: RetryOptions,
  attempt: number,
  elapsedMs: number,
  delayMs: number,
): number | undefined {
  if (attempt >= options.maxAttempts) return undefined;
  if (elapsedMs + delayMs >= options.budgetMs) return undefined;
  return delayMs;
}

function invalid(key: string, value: unknown, expected: string): never {
  throw new ConfigError(`retry.${key}`, value, expected);
}
