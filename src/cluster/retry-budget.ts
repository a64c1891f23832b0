/**
 * A retry budget (Finagle's `RetryBudget`, Envoy's retry budgets): retries across all calls of a client
 * are capped to a share of its traffic, so a struggling provider is not hit by a retry storm on top of
 * the load that made it struggle. Over a sliding window, a retry is allowed while
 * `retries + 1 <= ratio x calls + minRetriesPerSecond x windowSeconds`; the second term is a reserve
 * that lets a quiet client retry at all.
 *
 * Call `recordCall()` once per call (not per attempt) and `tryAcquireRetry()` right before each retry,
 * after the retry policy agreed to one.
 */
import { ConfigError } from '../core/config-error.js';
import { createWindowCounter } from '../loadbalance/window-counter.js';

export interface RetryBudgetOptions {
  /** Retries allowed per call over the window, on top of the reserve. Default 0.2. */
  ratio: number;
  /** Reserve: retries per second allowed whatever the traffic. Default 10. */
  minRetriesPerSecond: number;
  /** The sliding window, ms. Default 10000. */
  windowMs: number;
  /** Buckets the window is kept in (its resolution). Default 10. */
  windowBuckets: number;
  /** Clock, ms. Default Date.now. */
  now: () => number;
}

export const DEFAULT_RETRY_BUDGET_OPTIONS: RetryBudgetOptions = {
  ratio: 0.2,
  minRetriesPerSecond: 10,
  windowMs: 10_000,
  windowBuckets: 10,
  now: Date.now,
};

export interface RetryBudget {
  /** Counts one call towards the budget. */
  recordCall(): void;
  /** Takes one retry from the budget: false (and nothing taken) when it is spent. */
  tryAcquireRetry(): boolean;
  /** How many retries could be taken now (for metrics). */
  available(): number;
}

/** Fills `options` from `DEFAULT_RETRY_BUDGET_OPTIONS` and validates every field. */
export function resolveRetryBudgetOptions(options: Partial<RetryBudgetOptions> = {}): RetryBudgetOptions {
  const o: RetryBudgetOptions = { ...DEFAULT_RETRY_BUDGET_OPTIONS, ...options };
  const check = (key: keyof RetryBudgetOptions, ok: boolean, expected: string) => {
    if (!ok) throw new ConfigError(`retryBudget.${key}`, o[key], expected);
  };
  check('ratio', o.ratio >= 0 && Number.isFinite(o.ratio), 'a finite number >= 0');
  check(
    'minRetriesPerSecond',
    o.minRetriesPerSecond >= 0 && Number.isFinite(o.minRetriesPerSecond),
    'a finite number >= 0',
  );
  check('windowMs', o.windowMs > 0 && Number.isFinite(o.windowMs), 'a finite number > 0');
  check('windowBuckets', Number.isInteger(o.windowBuckets) && o.windowBuckets >= 1, 'an integer >= 1');
  check('now', typeof o.now === 'function', 'a function returning ms');
  return o;
}

const CALLS = 0;
const RETRIES = 1;

export function createRetryBudget(options: Partial<RetryBudgetOptions> = {}): RetryBudget {
  const o = resolveRetryBudgetOptions(options);
  const window = createWindowCounter(o.windowMs, o.windowBuckets, 2);
  const reserve = (o.minRetriesPerSecond * o.windowMs) / 1000;

  function available(now: number): number {
    return Math.floor(o.ratio * window.sum(CALLS, now) + reserve - window.sum(RETRIES, now) + 1e-9);
  }

  return {
    recordCall() {
      window.add(CALLS, 1, o.now());
    },
    tryAcquireRetry() {
      const now = o.now();
      if (available(now) < 1) return false;
      window.add(RETRIES, 1, now);
      return true;
    },
    available() {
      return Math.max(0, available(o.now()));
    },
  };
}
