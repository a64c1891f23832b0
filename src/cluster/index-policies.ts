/**
 * The built-in retry policies (kind `retry`, in app/builtin-extensions.ts's constant table). Each factory
 * takes resolved `RetryOptions` (see `resolveRetryOptions`).
 */
import { createAdaptiveRetryPolicy } from './retry-adaptive.js';
import { createExponentialRetryPolicy } from './retry-exponential.js';
import { createFixedRetryPolicy } from './retry-fixed.js';
import { createNoRetryPolicy } from './retry-none.js';
import type { RetryPolicyFactory } from './retry-policy.js';

/** Name -> factory of every built-in retry policy. */
export const BUILTIN_RETRY_POLICIES: Readonly<Record<string, RetryPolicyFactory>> = {
  none: createNoRetryPolicy,
  fixed: createFixedRetryPolicy,
  exponential: createExponentialRetryPolicy,
  adaptive: createAdaptiveRetryPolicy,
};

export type { OutlierDetector, OutlierDetectorOptions, OutlierState } from './circuit-breaker.js';
export { createOutlierDetector, DEFAULT_OUTLIER_OPTIONS } from './circuit-breaker.js';
export { adaptiveDelayMs, createAdaptiveRetryPolicy } from './retry-adaptive.js';
export type { RetryBudget, RetryBudgetOptions } from './retry-budget.js';
export { createRetryBudget, DEFAULT_RETRY_BUDGET_OPTIONS } from './retry-budget.js';
export {
  backoffCeiling,
  createExponentialRetryPolicy,
  DEFAULT_EXPONENTIAL_BASE_MS,
} from './retry-exponential.js';
export { createFixedRetryPolicy } from './retry-fixed.js';
export { createNoRetryPolicy } from './retry-none.js';
export * from './retry-policy.js';
