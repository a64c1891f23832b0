/**
 * `shutdown` (provider): once the provider stops taking calls (the last step of a graceful
 * shutdown, after the drain), a new call is refused with `Shutdown` before anything else runs.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';

/** What the filter watches: the provider's shutdown state. */
export interface ShutdownState {
  /** Set once new calls are refused. */
  readonly refusing: boolean;
}

export function shutdownFilter(state: ShutdownState): NamedFilter {
  return defineFilter({
    name: 'shutdown',
    position: 'provider',
    order: FILTER_ORDER.provider.shutdown,
    start() {
      if (state.refusing) throw new RpcError('Shutdown', 'provider is shutting down');
    },
  });
}
