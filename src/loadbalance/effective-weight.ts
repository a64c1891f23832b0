/**
 * Effective weights (nginx's `effective_weight`, Dubbo-seed "weights that learn"): per consumer and per
 * provider, a factor in [`EFFECTIVE_WEIGHT_FLOOR`, 1] that multiplies the provider's (warmed-up)
 * configured weight. Each failed attempt (network, timeout, overload, internal: never a business error)
 * lowers it by `EFFECTIVE_WEIGHT_FAILURE_STEP`; each successful one raises it by
 * `EFFECTIVE_WEIGHT_SUCCESS_STEP`, so a flaky-but-alive provider gets less traffic and wins it back
 * step by step once it recovers. It never drops to 0: the provider keeps a trickle of calls, and those
 * calls are what restore it (outlier ejection, not this, takes the dead out of selection).
 *
 * The steps are chosen so that a provider failing more than about 1 call in 11
 * (`SUCCESS_STEP / (FAILURE_STEP + SUCCESS_STEP)`) drifts down to the floor, and one failing less keeps
 * (or regains) its full weight. Counting is by calls, not time: a consumer that sends nothing learns
 * nothing and forgets nothing.
 */
import type { Endpoint } from './load-balancer.js';
import { warmupWeight } from './warmup.js';

/** Lowest effective weight, as a share of the configured weight. */
export const EFFECTIVE_WEIGHT_FLOOR = 0.1;
/** How much one failed attempt lowers the factor (5 in a row take a provider from full to the floor). */
export const EFFECTIVE_WEIGHT_FAILURE_STEP = 0.2;
/** How much one successful attempt raises the factor (50 bring it from the floor back to full). */
export const EFFECTIVE_WEIGHT_SUCCESS_STEP = 0.02;

/** The factor after one attempt's outcome. */
export function nextWeightFactor(factor: number, ok: boolean): number {
  if (ok) return factor >= 1 ? 1 : Math.min(1, factor + EFFECTIVE_WEIGHT_SUCCESS_STEP);
  return Math.max(EFFECTIVE_WEIGHT_FLOOR, factor - EFFECTIVE_WEIGHT_FAILURE_STEP);
}

/** An endpoint's learnt factor (1 when its stats do not keep one). */
export function weightFactorOf(endpoint: Endpoint): number {
  const factor = endpoint.stats.weightFactor;
  return factor === undefined ? 1 : factor;
}

/**
 * The weight a balancer uses for `endpoint` now: warmed up, then scaled by its learnt factor when
 * `effectiveWeight` is on.
 */
export function balancingWeight(
  endpoint: Endpoint,
  now: number,
  options: { readonly warmupMs: number; readonly effectiveWeight: boolean },
): number {
  const w = warmupWeight(endpoint.weight, endpoint.startTime, now, options.warmupMs);
  if (!options.effectiveWeight || w <= 0) return w;
  return w * weightFactorOf(endpoint);
}
