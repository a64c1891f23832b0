/**
 * `metrics-call` (consumer, per call, order 50): counts every call a reference made, by outcome code, as its
 * caller saw it (after every retry and failover), with its latency, the calls in flight and the last
 * failure. Outermost of the per-call filters, so refusals by consumer-side limits and answers from a
 * cache are counted too. The per-attempt side is `metrics-client` (order 450).
 */
import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { RpcError } from '../core/rpc-error.js';
import type { MethodMetrics } from '../observability/method-metrics.js';
import { METRICS_FILTER_ORDER, type MeteredInvocation } from './metrics-server.js';

export function metricsCallFilter(metrics: MethodMetrics): NamedFilter {
  return defineFilter({
    name: 'metrics-call',
    position: 'call',
    order: METRICS_FILTER_ORDER,
    start(invocation) {
      metrics.inFlight++;
      (invocation as MeteredInvocation).meteredAt = tickMonotonic();
    },
    end(invocation, error) {
      metrics.inFlight--;
      metrics.latency.observe(tickMonotonic() - (invocation as MeteredInvocation).meteredAt);
      if (error === undefined) metrics.ok++;
      else {
        const rpc = RpcError.from(error);
        metrics.failed(rpc.code, rpc.message, error);
      }
    },
  });
}
