/**
 * `limit` (call, only where `limits` is configured on a reference or a method): the
 * consumer's own limits, before the cluster strategy, so a refused call is never sent:
 * - `rate`: calls a second (a token bucket), refused with `RateLimited` and a retry-after hint;
 * - `actives`: calls in flight (Dubbo's `actives`), refused with `Overloaded`.
 * A reference's limits are shared by its methods; a method's are its own (both apply).
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import { RpcError } from '../core/rpc-error.js';
import type { ConsumerLimits } from '../governance/limit-options.js';
import { burstOf, createTokenBucket, type TokenBucket } from '../governance/token-bucket.js';

/** The state of one scope's consumer limits (a reference's, shared by its methods, or a method's). */
export interface ConsumerLimitState {
  readonly label: string;
  readonly limits: ConsumerLimits;
  readonly bucket: TokenBucket | undefined;
  active: number;
}

export function createConsumerLimitState(label: string, limits: ConsumerLimits): ConsumerLimitState {
  return { label, limits, bucket: limits.rate ? createTokenBucket(limits.rate) : undefined, active: 0 };
}

function refuse(states: readonly ConsumerLimitState[], admitted: number, error: RpcError): never {
  for (let j = 0; j < admitted; j++) if (states[j]!.limits.actives !== undefined) states[j]!.active--;
  throw error;
}

export function consumerLimitFilter(states: readonly ConsumerLimitState[]): NamedFilter {
  if (states.every((state) => state.limits.actives === undefined)) return rateOnlyFilter(states);
  return defineFilter({
    name: 'limit',
    position: 'call',
    order: FILTER_ORDER.call.limit,
    start() {
      for (let i = 0; i < states.length; i++) {
        const state = states[i]!;
        const { actives } = state.limits;
        if (actives !== undefined && state.active >= actives) {
          refuse(
            states,
            i,
            new RpcError('Overloaded', `${state.label}: ${actives} calls in flight (limits.actives)`, {
              neverSent: true,
              details: { limit: `${state.label} actives ${actives}` },
            }),
          );
        }
        const retryAfterMs = state.bucket === undefined ? 0 : state.bucket.take(tickMonotonic());
        if (retryAfterMs > 0) refuse(states, i, rateLimited(state, retryAfterMs));
        if (actives !== undefined) state.active++;
      }
    },
    end() {
      for (let i = 0; i < states.length; i++) {
        if (states[i]!.limits.actives !== undefined) states[i]!.active--;
      }
    },
  });
}

/** Rates only: a start hook and no end (the per-call chain then adds no promise of its own). */
function rateOnlyFilter(states: readonly ConsumerLimitState[]): NamedFilter {
  return defineFilter({
    name: 'limit',
    position: 'call',
    order: FILTER_ORDER.call.limit,
    start() {
      for (let i = 0; i < states.length; i++) {
        const state = states[i]!;
        const retryAfterMs = state.bucket!.take(tickMonotonic());
        if (retryAfterMs > 0) refuse(states, 0, rateLimited(state, retryAfterMs));
      }
    },
  });
}

function rateLimited(state: ConsumerLimitState, retryAfterMs: number): RpcError {
  const rate = state.limits.rate!;
  const limit = `${state.label}: ${rate.perSecond} calls/s (burst ${burstOf(rate)})`;
  return new RpcError(
    'RateLimited',
    `rate limited by the consumer's ${limit}; retry after ${retryAfterMs} ms`,
    {
      neverSent: true,
      details: { retryAfterMs, limit },
    },
  );
}
