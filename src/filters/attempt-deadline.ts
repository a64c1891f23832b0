/**
 * `deadline` (attempt): one deadline covers every attempt of a call. Each attempt gets what
 * is left of it as its budget (sent with the request, and enforced by the connection); an attempt that
 * would start past the deadline is refused with `Timeout` before a provider is called.
 *
 * With `attemptCapMs` (`consumer.attemptTimeoutMs`), an attempt of an idempotent method waits at most
 * that long: one sent to a host that went silent fails `Timeout` after the cap, and the cluster tries
 * another provider with what is left of the deadline, instead of losing the whole call there while the
 * heartbeat has not yet given the host up. A method that is not idempotent is never capped: its timed-out
 * attempt is not retried, so a cap would only shorten its deadline.
 */

import { tickNow } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import type { AttemptInvocation } from './attempt-invocation.js';

export function attemptDeadlineFilter(
  label: string,
  attemptCapMs = 0,
  now: () => number = tickNow,
): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'deadline',
    position: 'attempt',
    order: FILTER_ORDER.attempt.deadline,
    start(call) {
      const cap = attemptCapMs > 0 && call.idempotent ? attemptCapMs : 0;
      if (call.deadline === 0) {
        call.attempt.timeoutMs = cap;
        return;
      }
      const left = call.deadline - now();
      if (left <= 0) throw new RpcError('Timeout', `${label} ran out of time before a provider was called`);
      call.attempt.timeoutMs = cap > 0 && cap < left ? cap : left;
    },
  });
}
