/**
 * A reusable scratch table of effective (warmed-up) weights, one per balancer instance. `select` is
 * synchronous, so one table per balancer is never shared between two picks in flight; it grows when a
 * longer list arrives and is otherwise reused, so the common path allocates nothing.
 */

import { balancingWeight } from './effective-weight.js';
import type { Endpoint, LoadBalancerOptions } from './load-balancer.js';

export interface WeightTable {
  /** Effective weight per endpoint index (only the first `length` entries are meaningful). */
  weights: Float64Array;
  /** Number of endpoints loaded. */
  length: number;
  /** Sum of the loaded weights. */
  total: number;
  /** Whether every endpoint with a positive weight has the same weight (then a uniform pick will do). */
  same: boolean;
  /** How many endpoints have a positive weight. */
  positive: number;
  /** Index of the last endpoint with a positive weight (the only one when `positive === 1`). */
  lastPositive: number;
}

export function createWeightTable(capacity = 16): WeightTable {
  return {
    weights: new Float64Array(capacity),
    length: 0,
    total: 0,
    same: true,
    positive: 0,
    lastPositive: -1,
  };
}

/** Grows `table.weights` (without keeping contents) so that it holds at least `n` entries. */
export function ensureCapacity(table: WeightTable, n: number): void {
  if (table.weights.length < n) {
    let size = table.weights.length * 2;
    while (size < n) size *= 2;
    table.weights = new Float64Array(size);
  }
}

/**
 * Loads the warmed-up (and, with `effectiveWeight`, learnt) weights of `endpoints` into `table`. When every configured weight is 0 the
 * endpoints are all loaded with weight 1: `select` must return something, and "all disabled" is better
 * served by an even spread than by always the first one.
 */
export function loadWeights(
  table: WeightTable,
  endpoints: readonly Endpoint[],
  options: LoadBalancerOptions,
): WeightTable {
  const n = endpoints.length;
  ensureCapacity(table, n);
  const weights = table.weights;
  const now = options.now();
  let total = 0;
  let positive = 0;
  let lastPositive = -1;
  let first = -1;
  let same = true;
  for (let i = 0; i < n; i++) {
    const e = endpoints[i]!;
    const w = balancingWeight(e, now, options);
    weights[i] = w;
    if (w > 0) {
      total += w;
      positive++;
      lastPositive = i;
      if (first < 0) first = w;
      else if (w !== first) same = false;
    }
  }
  if (positive === 0) {
    weights.fill(1, 0, n);
    total = n;
    positive = n;
    lastPositive = n - 1;
    same = true;
  }
  table.length = n;
  table.total = total;
  table.positive = positive;
  table.lastPositive = lastPositive;
  table.same = same && positive === n;
  return table;
}

/**
 * A weighted random index in `table`, skipping `exclude` (pass -1 to exclude nothing). `r` is a draw in
 * [0, 1). Zero-weight entries are never returned unless nothing else is left.
 */
export function pickWeighted(table: WeightTable, r: number, exclude = -1): number {
  const n = table.length;
  const weights = table.weights;
  if (table.same) {
    // Every entry has the same positive weight: a plain uniform pick.
    const count = exclude < 0 ? n : n - 1;
    let index = Math.floor(r * count);
    if (index >= count) index = count - 1;
    if (exclude >= 0 && index >= exclude) index++;
    return index;
  }
  const total = exclude < 0 ? table.total : table.total - weights[exclude]!;
  let offset = r * total;
  let fallback = -1;
  for (let i = 0; i < n; i++) {
    if (i === exclude) continue;
    const w = weights[i]!;
    if (w <= 0) continue;
    fallback = i;
    offset -= w;
    if (offset < 0) return i;
  }
  // Rounding left a sliver past the last positive entry; it belongs to that one.
  return fallback >= 0 ? fallback : exclude === 0 ? Math.min(1, n - 1) : 0;
}
