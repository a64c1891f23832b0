/**
 * `metrics-client` (consumer, per attempt): counts each attempt by provider address and
 * outcome code, and the retries (attempts after a call's first) and failovers (retries that went to
 * another provider than the attempt before). An attempt refused before this filter (by a filter in
 * front of it) is not an attempt here; its call is still counted by `metrics-call`. Attempts refused by
 * adaptive throttling (the `throttle` filter, after this one) are attempts, counted by code and as shed
 * (`throttled`).
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import { shedReasonOf } from '../core/shed.js';
import type { MethodMetrics } from '../observability/method-metrics.js';
import type { AttemptInvocation } from './attempt-invocation.js';

export function metricsClientFilter(metrics: MethodMetrics): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'metrics-client',
    position: 'attempt',
    order: FILTER_ORDER.attempt['metrics-client'],
    start(call) {
      const address = call.remoteAddress ?? '';
      if (call.attempts > 0) {
        metrics.retries++;
        if (call.lastAttemptAddress !== address) metrics.failovers++;
      }
      call.attempts++;
      call.lastAttemptAddress = address;
    },
    end(invocation, error) {
      metrics.attempt(invocation.remoteAddress ?? '', error === undefined ? 'OK' : RpcError.from(error).code);
      const shed = error === undefined ? undefined : shedReasonOf(error);
      if (shed !== undefined) metrics.shedFor(shed);
    },
  });
}
