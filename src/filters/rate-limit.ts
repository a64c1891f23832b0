/**
 * `rate-limit` (provider, only where a rate limit is configured): token buckets per app,
 * service or method, for every caller together, per consumer application and per remote host
 * (governance/provider-limiters.ts). A call over a limit is refused with `RateLimited` before its
 * arguments are decoded, its message naming the limit and its details the retry-after hint
 * (`retryAfterMs`); consumers do not fail over on it unless `failoverOnRateLimited` says so.
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import type { RateLimiter } from '../governance/provider-limiters.js';

export function rateLimitFilter(limiters: readonly RateLimiter[]): NamedFilter {
  return defineFilter({
    name: 'rate-limit',
    position: 'provider',
    order: FILTER_ORDER.provider['rate-limit'],
    start(invocation) {
      const now = tickMonotonic();
      for (let i = 0; i < limiters.length; i++) {
        const limiter = limiters[i]!;
        const retryAfterMs = limiter.take(invocation, now);
        if (retryAfterMs > 0) {
          const limit = limiter.describe(invocation);
          throw new RpcError('RateLimited', `rate limited by ${limit}; retry after ${retryAfterMs} ms`, {
            details: { retryAfterMs, limit },
          });
        }
      }
    },
  });
}
