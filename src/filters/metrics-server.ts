/**
 * `metrics-server` (provider): counts every call the provider was asked for, by outcome code, with
 * its latency, the calls in flight and the last failure (the app's metrics store; docs/observability.md),
 * and the queue time of each call whose method ran: from its arrival to its method starting.
 * Outermost of the provider's filters, so that refusals (`Shutdown`, `Timeout` at the deadline check,
 * `Unauthorized`, `RateLimited`, `Overloaded`) are counted by code as well as what the method answered,
 * and the calls shed under overload by reason (core/shed.ts: `deadline`, `expired`).
 * A handful of increments per call and no clock reading of its own for a method that answers later (the
 * run's shared reading, core/clock.ts); on by default (`metrics: false` leaves it out).
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { shedReasonOf } from '../core/shed.js';
import type { MethodMetrics } from '../observability/method-metrics.js';

/** Where the filter keeps when it started measuring a call. */
export interface MeteredInvocation extends Invocation {
  meteredAt: number;
  /** performance.now() when the method started running (set by the provider just before it runs). */
  readonly runAt?: number;
  /** The request's encoded argument bytes, where known. */
  readonly requestBytes?: number;
}

/** What a failure counts as: an RpcError's code, `ProviderError` for anything else a handler threw. */
export function outcomeCode(error: unknown): string {
  return RpcError.is(error) ? error.code : 'ProviderError';
}

export function metricsServerFilter(metrics: MethodMetrics): NamedFilter<MeteredInvocation> {
  return defineFilter<MeteredInvocation>({
    name: 'metrics-server',
    position: 'provider',
    order: FILTER_ORDER.provider['metrics-server'],
    start(call) {
      metrics.inFlight++;
      metrics.bytesIn += call.requestBytes ?? 0;
      call.meteredAt = tickMonotonic();
      if (call.stream !== undefined) metrics.streamMetrics().started(call.stream);
    },
    end(invocation, error) {
      const startedAt = invocation.meteredAt;
      // A later run reads the clock once for every call ending in it; a call that ended in the run it
      // started in (a synchronous method) reads it itself: its latency includes the frames of the same
      // read that went before it, as it waited for them.
      let now = tickMonotonic();
      if (now === startedAt) now = performance.now();
      metrics.inFlight--;
      metrics.latency.observe(now - startedAt);
      const runAt = invocation.runAt ?? 0;
      if (runAt !== 0) metrics.queued(runAt - startedAt);
      if (invocation.stream !== undefined)
        metrics.streams?.finished(
          invocation.stream,
          error === undefined ? 'OK' : outcomeCode(error),
          now - startedAt,
        );
      if (error === undefined) metrics.ok++;
      else {
        metrics.failed(outcomeCode(error), (error as Error)?.message ?? String(error), error);
        const shed = shedReasonOf(error);
        if (shed !== undefined) metrics.shedFor(shed);
      }
    },
  });
}
