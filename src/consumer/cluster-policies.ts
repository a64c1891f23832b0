/**
 * Adapters from the configured policies to what a cluster context needs: one outlier detector and one
 * retry budget per provider directory (shared by every method and reference of that service), one
 * retry-delay policy per method.
 */

import { createOutlierDetector, type OutlierDetector } from '../cluster/circuit-breaker.js';
import { createRetryBudget, type RetryBudget } from '../cluster/retry-budget.js';
import { resolveRetryOptions } from '../cluster/retry-policy.js';
import type { ConsumerConfig } from '../config/callisto-config.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { HealthTracker, RetryControl } from './cluster-context.js';
import type { ProviderDirectory } from './provider-directory.js';
import '../cluster/index-policies.js';

const detectors = new WeakMap<ProviderDirectory, OutlierDetector>();
const budgets = new WeakMap<ProviderDirectory, RetryBudget>();

export function createHealthTracker(
  source: { directory: ProviderDirectory },
  options: Pick<ConsumerConfig, 'maxEjectionRatio' | 'ejectAfterFailures' | 'ejectionMs'>,
): HealthTracker {
  let detector = detectors.get(source.directory);
  if (detector === undefined) {
    const created = createOutlierDetector({
      maxEjectionPercent: Math.round(options.maxEjectionRatio * 100),
      consecutiveFailures: options.ejectAfterFailures,
      baseEjectionMs: options.ejectionMs,
      maxEjectionMs: Math.max(options.ejectionMs, 300_000),
    });
    source.directory.onChange((_added, removed) => {
      for (const endpoint of removed) created.forget(endpoint.address);
    });
    detectors.set(source.directory, created);
    detector = created;
  }
  return detector;
}

/** The outlier detector of a directory, if one was created (admin and tests). */
export function healthOf(directory: ProviderDirectory): OutlierDetector | undefined {
  return detectors.get(directory);
}

export function createRetryControl(
  extensions: ExtensionRegistry,
  source: { directory: ProviderDirectory },
  options: Pick<
    ConsumerConfig,
    'retry' | 'retries' | 'retryDelayMs' | 'retryMaxDelayMs' | 'retryBudgetRatio'
  >,
): RetryControl {
  let budget = budgets.get(source.directory);
  if (budget === undefined) {
    budget = createRetryBudget({ ratio: options.retryBudgetRatio });
    budgets.set(source.directory, budget);
  }
  const policy = extensions.get(
    'retry',
    options.retry,
  )(
    resolveRetryOptions({
      maxAttempts: options.retries + 1,
      baseDelayMs: options.retryDelayMs,
      maxDelayMs: Math.max(options.retryDelayMs, options.retryMaxDelayMs),
    }),
  );
  const shared = budget;
  return {
    nextDelayMs: (attempt, elapsedMs) => policy.nextDelayMs(attempt, elapsedMs),
    recordCall: () => shared.recordCall(),
    tryAcquireRetry: () => shared.tryAcquireRetry(),
  };
}
