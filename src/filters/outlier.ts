/**
 * `outlier` (attempt, when `outlierDetection` is on): reports each sent attempt's outcome to
 * the service's outlier detector (cluster/circuit-breaker.ts), which ejects failing providers from
 * selection. Business errors do not count against a provider.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { AttemptInvocation } from './attempt-invocation.js';
import { isHealthy } from './health.js';

/** Where outcomes go (the directory's outlier detector). */
export interface OutcomeRecorder {
  record(address: string, ok: boolean): void;
}

export function outlierFilter(detector: OutcomeRecorder): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'outlier',
    position: 'attempt',
    order: FILTER_ORDER.attempt.outlier,
    end(call, error) {
      if (call.oneway || !call.attempt.sent) return;
      detector.record(call.attempt.endpoint!.address, isHealthy(error));
    },
  });
}
