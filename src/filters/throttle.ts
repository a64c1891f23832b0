/**
 * `throttle` (attempt, `consumer.adaptiveThrottling`, on by default): client-side adaptive throttling
 * (cluster/adaptive-throttle.ts, the Google SRE book's). Each provider endpoint keeps, over the last 2
 * minutes, the attempts sent to it and those it accepted; an attempt is refused here, before it is sent,
 * with probability max(0, (requests − K × accepts) / (requests + 1)) (`consumer.adaptiveThrottlingK`,
 * default 2). A refused attempt fails `Overloaded`, never sent (`details.shed: 'throttled'`); failover
 * moves the call to an untried provider at once, not counted as one of its retries nor drawn from the
 * retry budget (cluster/failover.ts), since it cost no provider anything.
 *
 * Counted: the attempts the provider answered; accepted: any answer that is not an overload refusal
 * (`Overloaded` or `RateLimited` answered by the provider). An attempt that got no answer (a timeout,
 * the connection lost, the caller cancelled), one that never reached the wire and one-way calls are not
 * counted: silence is for the outlier detector and the connection's suspicion, and counting timeouts
 * would let a consumer whose deadlines are too short throttle a healthy provider.
 *
 * After `metrics-client` (which counts a refused attempt as an attempt, and as shed `throttled`); before
 * it `endpoint-stats` and `outlier` see an attempt that was never sent, which they leave out.
 */
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import { shedError } from '../core/shed.js';
import type { AttemptInvocation } from './attempt-invocation.js';

/** Whether the provider accepted an attempt; undefined when it did not answer it. */
function accepted(error: unknown): boolean | undefined {
  if (error === undefined || !RpcError.is(error)) return true;
  if (!error.remote) return undefined;
  return error.code !== 'Overloaded' && error.code !== 'RateLimited';
}

export function throttleFilter(label: string, k: number): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'throttle',
    position: 'attempt',
    order: FILTER_ORDER.attempt.throttle,
    start(call) {
      if (call.oneway) return;
      const endpoint = call.attempt.endpoint!;
      if (!endpoint.throttle.refuse(k)) return;
      throw shedError(
        'Overloaded',
        `${label}: not sent to ${endpoint.address}, which refused most recent attempts (adaptive throttling, K ${k})`,
        'throttled',
        { neverSent: true, details: { provider: endpoint.address } },
      );
    },
    end(call, error) {
      if (call.oneway || !call.attempt.sent) return;
      const ok = accepted(error);
      if (ok !== undefined) call.attempt.endpoint!.throttle.record(ok);
    },
  });
}
