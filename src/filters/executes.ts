/**
 * `executes` (provider, only where `limits.executes` is configured): calls of a method (or of
 * a service, or of the whole app) executing at once, Dubbo's `executes`. One more is refused with
 * `Overloaded` before its arguments are decoded (consumers send it elsewhere: it never ran); the slot is
 * given back when the call ends.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import type { ExecutionLimit } from '../governance/provider-limiters.js';

export function executesFilter(limits: readonly ExecutionLimit[]): NamedFilter {
  return defineFilter({
    name: 'executes',
    position: 'provider',
    order: FILTER_ORDER.provider.executes,
    start() {
      for (let i = 0; i < limits.length; i++) {
        const limit = limits[i]!;
        if (limit.active >= limit.max) {
          for (let j = 0; j < i; j++) limits[j]!.active--;
          throw new RpcError(
            'Overloaded',
            `${limit.label}: ${limit.max} calls executing at once (limits.executes); try another provider`,
            { details: { limit: `${limit.label} executes ${limit.max}` } },
          );
        }
        limit.active++;
      }
    },
    end() {
      for (let i = 0; i < limits.length; i++) limits[i]!.active--;
    },
  });
}
