/**
 * `observe` (provider): publishes every call the provider executed on the
 * `callisto:server:call` diagnostics channel (service, method, caller, duration, error code). Nothing is
 * measured while nobody subscribes.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { channels, type ServerCallMessage } from '../observability/channels.js';

/** Where the filter keeps when it started measuring a call (0: not measured). */
export interface ObservedInvocation extends Invocation {
  observedAt: number;
}

export function observeServerFilter(): NamedFilter<ObservedInvocation> {
  return defineFilter<ObservedInvocation>({
    name: 'observe',
    position: 'provider',
    order: FILTER_ORDER.provider.observe,
    start(invocation) {
      if (channels.serverCall.hasSubscribers) invocation.observedAt = performance.now();
    },
    end(call, error) {
      if (call.observedAt === 0) return;
      const message: ServerCallMessage = {
        service: call.service.name,
        method: call.method,
        remoteAddress: call.remoteAddress ?? '',
        durationMs: performance.now() - call.observedAt,
        error: error === undefined ? undefined : RpcError.is(error) ? error.code : 'ProviderError',
      };
      call.observedAt = 0;
      channels.serverCall.publish(message);
    },
  });
}
