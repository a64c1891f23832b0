/**
 * The endpoints tied for best in a "least something" balancer, broken by weighted random (Dubbo's
 * least-active tie-break). A reusable scratch set, one per balancer instance, so a pick allocates nothing.
 */

export interface TieSet {
  /** Endpoint indexes of the tied entries (the first `count` are meaningful). */
  indexes: Int32Array;
  /** Their weights, same positions. */
  weights: Float64Array;
  count: number;
  total: number;
  /** Whether all tied entries share one weight. */
  same: boolean;
}

export function createTieSet(capacity = 16): TieSet {
  return {
    indexes: new Int32Array(capacity),
    weights: new Float64Array(capacity),
    count: 0,
    total: 0,
    same: true,
  };
}

/** Empties the set, growing it to hold up to `n` entries. */
export function clearTies(ties: TieSet, n: number): void {
  if (ties.indexes.length < n) {
    let size = ties.indexes.length * 2;
    while (size < n) size *= 2;
    ties.indexes = new Int32Array(size);
    ties.weights = new Float64Array(size);
  }
  ties.count = 0;
  ties.total = 0;
  ties.same = true;
}

export function addTie(ties: TieSet, index: number, weight: number): void {
  const k = ties.count++;
  ties.indexes[k] = index;
  ties.weights[k] = weight;
  ties.total += weight;
  if (k > 0 && weight !== ties.weights[0]) ties.same = false;
}

/** One of the tied indexes, weighted by weight; `r` is a draw in [0, 1). */
export function pickTie(ties: TieSet, r: number): number {
  const count = ties.count;
  if (count === 1) return ties.indexes[0]!;
  if (ties.same || !(ties.total > 0)) {
    const k = Math.floor(r * count);
    return ties.indexes[k < count ? k : count - 1]!;
  }
  let offset = r * ties.total;
  for (let k = 0; k < count; k++) {
    offset -= ties.weights[k]!;
    if (offset < 0) return ties.indexes[k]!;
  }
  return ties.indexes[count - 1]!;
}

/** The whole of a "least something" balancer's pick, made once per balancer instance. */
export interface LowestCostPicker<E, C> {
  /**
   * The index of the lowest-cost endpoint among those with a positive weight (`weights`, same
   * positions), ties broken by weighted random with `r`, a draw in [0, 1). The cost function gets
   * `context`, so callers need no closure per pick.
   */
  pick(endpoints: readonly E[], weights: ArrayLike<number>, context: C, r: number): number;
}

/** A picker by `cost`, with a tie set of its own: a pick allocates nothing. */
export function createLowestCostPicker<E, C>(
  cost: (endpoint: E, context: C) => number,
): LowestCostPicker<E, C> {
  const ties = createTieSet();
  return {
    pick(endpoints, weights, context, r) {
      const n = endpoints.length;
      clearTies(ties, n);
      let lowest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        const w = weights[i]!;
        if (w <= 0) continue;
        const c = cost(endpoints[i]!, context);
        if (c < lowest) {
          lowest = c;
          clearTies(ties, n);
        } else if (c > lowest) {
          continue;
        }
        addTie(ties, i, w);
      }
      return pickTie(ties, r);
    },
  };
}
