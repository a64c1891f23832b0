/**
 * `endpoint-stats` (attempt): the live counters of each provider that the latency- and
 * load-aware balancers read (calls in flight, mean latency of successful calls, error rate): a call
 * counts as in flight from its attempt's start, and its outcome is recorded once it was sent and ended
 * (an attempt refused before it reached the wire leaves no sample). One-way calls are not counted.
 * The provider's load report (`callisto-load`, on some of its answers: loadbalance/load-report.ts) goes
 * into the same stats; the connection takes it out of the answer's attachments (consumer/pending-call.ts),
 * so no filter or application sees it. Always on: the balancers depend on it.
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { AttemptInvocation } from './attempt-invocation.js';
import { isHealthy } from './health.js';

export function endpointStatsFilter(): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'endpoint-stats',
    position: 'attempt',
    order: FILTER_ORDER.attempt['endpoint-stats'],
    start(call) {
      if (!call.oneway) call.attempt.endpoint!.stats.begin();
    },
    end(call, error) {
      if (call.oneway) return;
      const { endpoint, sent, startedAt, loadReport } = call.attempt;
      const stats = endpoint!.stats;
      if (sent) stats.end(tickMonotonic() - startedAt, isHealthy(error));
      else stats.abandon();
      if (loadReport !== undefined) stats.reportLoad(loadReport);
    },
  });
}
