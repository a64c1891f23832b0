/**
 * `metrics-call` (consumer, per call): counts every call a reference made, by outcome code, as its
 * caller saw it (after every retry and failover), with its latency, the calls in flight and the last
 * failure. Outermost of the per-call filters, so refusals by consumer-side limits and answers from a
 * cache are counted too. The per-attempt side is `metrics-client`.
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import type { MethodMetrics } from '../observability/method-metrics.js';
import type { MeteredInvocation } from './metrics-server.js';

export function metricsCallFilter(metrics: MethodMetrics): NamedFilter<MeteredInvocation> {
  return defineFilter<MeteredInvocation>({
    name: 'metrics-call',
    position: 'call',
    order: FILTER_ORDER.call['metrics-call'],
    start(invocation) {
      metrics.inFlight++;
      invocation.meteredAt = tickMonotonic();
      if (invocation.stream !== undefined) metrics.streamMetrics().started(invocation.stream);
    },
    end(invocation, error) {
      metrics.inFlight--;
      const ms = tickMonotonic() - invocation.meteredAt;
      metrics.latency.observe(ms);
      const rpc = error === undefined ? undefined : RpcError.from(error);
      if (invocation.stream !== undefined)
        metrics.streams?.finished(invocation.stream, rpc?.code ?? 'OK', ms);
      if (rpc === undefined) metrics.ok++;
      else metrics.failed(rpc.code, rpc.message, error);
    },
  });
}
