/**
 * `deadline` (provider): a call whose caller's deadline has already passed when it is read
 * is refused with `Timeout`, without running anything (the caller has given up on it). The deadline is
 * the provider's own: the time the request's bytes were read plus the budget the request carries.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';

export function providerDeadlineFilter(now: () => number = Date.now): NamedFilter {
  return defineFilter({
    name: 'deadline',
    position: 'provider',
    order: FILTER_ORDER.provider.deadline,
    start(invocation) {
      if (invocation.deadline > 0 && now() >= invocation.deadline) {
        throw new RpcError(
          'Timeout',
          `${invocation.service.name}.${invocation.method}: deadline passed before execution`,
        );
      }
    },
  });
}
