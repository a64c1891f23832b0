/**
 * `leaky-rate` (provider, only where a rate limit of `kind: 'leaky'` is configured): leaky buckets per
 * app, service or method, for every caller together, per consumer application and per remote host
 * (governance/leaky-bucket.ts). Calls start at a steady rate: a call that comes before its turn waits
 * for it, at most `queue` calls wait in a bucket, and a call that finds the queue full is refused with
 * `Overloaded` and never runs. A call whose caller's deadline passes while it waits is answered
 * `Timeout` at its turn, without running (`details.shed: 'expired'`).
 *
 * It wraps the rest of the chain (it delays it), so it runs after `decode`: a waiting call holds what
 * admission gave it (an execution slot, its elements) and counts in `executes`; the queue bounds them.
 */
import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { shedError } from '../core/shed.js';
import type { LeakyLimiter } from '../governance/provider-limiters.js';

export function leakyRateFilter(limiters: readonly LeakyLimiter[]): NamedFilter {
  return defineFilter({
    name: 'leaky-rate',
    position: 'provider',
    order: FILTER_ORDER.provider['leaky-rate'],
    step: (next) => (invocation: Parameters<typeof next>[0]) => {
      const now = tickMonotonic();
      const buckets = limiters.map((limiter) => limiter.bucket(invocation));
      const full = buckets.findIndex((bucket) => !bucket.hasRoom(now));
      if (full >= 0) {
        const limit = limiters[full]!.describe(invocation);
        throw new RpcError('Overloaded', `refused by ${limit}: its queue of waiting calls is full`, {
          details: { limit },
        });
      }
      let waitMs = 0;
      for (const bucket of buckets) waitMs = Math.max(waitMs, bucket.book(now));
      if (waitMs <= 0) return next(invocation);
      return turn(waitMs, invocation).then(() => next(invocation));
    },
  });
}

/** Resolves at the call's turn; rejects `Timeout` then if its caller's deadline passed meanwhile. */
function turn(waitMs: number, invocation: Invocation): Promise<void> {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      if (invocation.deadline > 0 && Date.now() >= invocation.deadline) {
        reject(
          shedError('Timeout', "the caller's deadline passed while the call waited for its turn", 'expired'),
        );
      } else resolve();
    }, waitMs);
  });
}
