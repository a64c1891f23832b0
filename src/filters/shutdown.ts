/**
 * `shutdown` (provider, order 100): once the provider stops taking calls (the last step of a graceful
 * shutdown, after the drain), a new call is refused with `Shutdown` before anything else runs.
 */
import { defineFilter, type NamedFilter } from '../core/filter.js';
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
    order: 100,
    start() {
      if (state.refusing) throw new RpcError('Shutdown', 'provider is shutting down');
    },
  });
}
