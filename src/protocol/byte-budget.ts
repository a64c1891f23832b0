/**
 * A budget of bytes shared by many holders: every connection of a server (or of a consumer's pool)
 * draws on one budget for the partial frames it holds, so the memory held for frames still arriving is
 * bounded for the whole side, not just per connection.
 */
export interface ByteBudget {
  /** Takes `bytes` from the budget; false (and nothing taken) when that would exceed it. */
  tryReserve(bytes: number): boolean;
  /** Gives back `bytes` taken earlier. */
  release(bytes: number): void;
  /** Bytes taken now. */
  readonly used: number;
  readonly limit: number;
}

export function createByteBudget(limit: number): ByteBudget {
  let used = 0;
  return {
    tryReserve(bytes) {
      if (used + bytes > limit) return false;
      used += bytes;
      return true;
    },
    release(bytes) {
      used -= bytes;
      if (used < 0) used = 0;
    },
    get used() {
      return used;
    },
    limit,
  };
}

/** A budget that never refuses (a decoder used on its own, in tests and tools). */
export const UNLIMITED_BUDGET: ByteBudget = createByteBudget(Number.POSITIVE_INFINITY);
