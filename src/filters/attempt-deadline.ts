/**
 * `deadline` (attempt, order 100): one deadline covers every attempt of a call. Each attempt gets what
 * is left of it as its budget (sent with the request, and enforced by the connection); an attempt that
 * would start past the deadline is refused with `Timeout` before a provider is called.
 */
import { tickNow } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { RpcError } from '../core/rpc-error.js';
import type { AttemptInvocation } from './attempt-invocation.js';

export function attemptDeadlineFilter(label: string, now: () => number = tickNow): NamedFilter {
  return defineFilter({
    name: 'deadline',
    position: 'attempt',
    order: 100,
    start(invocation) {
      const call = invocation as AttemptInvocation;
      if (call.deadline === 0) {
        call.attemptTimeoutMs = 0;
        return;
      }
      const left = call.deadline - now();
      if (left <= 0) throw new RpcError('Timeout', `${label} ran out of time before a provider was called`);
      call.attemptTimeoutMs = left;
    },
  });
}
