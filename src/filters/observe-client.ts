/**
 * `observe` (attempt): publishes every attempt on the `callisto:client:call` diagnostics
 * channel (service, method, the provider's address or `injvm`, duration, error code), so retries show.
 * Nothing is measured while nobody subscribes.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import { type ClientCallMessage, channels } from '../observability/channels.js';
import type { AttemptInvocation } from './attempt-invocation.js';

export function observeClientFilter(): NamedFilter<AttemptInvocation> {
  return defineFilter<AttemptInvocation>({
    name: 'observe',
    position: 'attempt',
    order: FILTER_ORDER.attempt.observe,
    start(invocation) {
      if (channels.clientCall.hasSubscribers) invocation.attempt.observedAt = performance.now();
    },
    end(call, error) {
      const attempt = call.attempt;
      if (attempt.observedAt === 0) return;
      const message: ClientCallMessage = {
        service: call.service.name,
        method: call.method,
        address: call.remoteAddress ?? '',
        durationMs: performance.now() - attempt.observedAt,
        error: error === undefined ? undefined : RpcError.from(error).code,
      };
      attempt.observedAt = 0;
      channels.clientCall.publish(message);
    },
  });
}
