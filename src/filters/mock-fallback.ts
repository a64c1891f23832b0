/**
 * `mock` (call, with `mock: 'fail'`): a call that fails (business errors excepted) is
 * answered from the mock instead: the reference's `mockImpl`, else the method's declared `mock`, else
 * undefined. Closest to the cluster, so the reference's own call filters see the mocked answer.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';

export function mockFallbackFilter(mock: (invocation: Invocation) => unknown): NamedFilter {
  return defineFilter({
    name: 'mock',
    position: 'call',
    order: FILTER_ORDER.call.mock,
    filter: (next) => async (invocation) => {
      try {
        return await next(invocation);
      } catch (error) {
        if (RpcError.is(error) && error.code === 'ProviderError') throw error;
        return mock(invocation);
      }
    },
  });
}
