/**
 * Counters over a sliding time window, kept in a ring of time buckets (like Hystrix's rolling counters):
 * adding and summing are O(1) amortized and allocate nothing. The window covers the current bucket and
 * the `buckets - 1` before it. Used by the cluster layer's retry budget and outlier detector.
 */

export interface WindowCounter {
  /** Adds `amount` to counter `channel` (0-based) at time `now` (ms). */
  add(channel: number, amount: number, now: number): void;
  /** The sum of counter `channel` over the window ending at `now`. */
  sum(channel: number, now: number): number;
  /** Forgets everything. */
  clear(): void;
}

/**
 * A window of `windowMs` split into `buckets` buckets, each holding `channels` counters. Time going
 * backwards (a clock adjustment) is treated as "still the current bucket".
 */
export function createWindowCounter(windowMs: number, buckets: number, channels: number): WindowCounter {
  if (!(windowMs > 0)) throw new RangeError(`window counter: windowMs must be > 0, got ${windowMs}`);
  if (!Number.isInteger(buckets) || buckets < 1) {
    throw new RangeError(`window counter: buckets must be an integer >= 1, got ${buckets}`);
  }
  const bucketMs = windowMs / buckets;
  const cells = new Float64Array(buckets * channels);
  const totals = new Float64Array(channels);
  /** Number of the current bucket (`floor(now / bucketMs)`), NaN before first use. */
  let epoch = Number.NaN;

  function slot(bucket: number): number {
    const index = bucket % buckets;
    return index < 0 ? index + buckets : index;
  }

  function advance(now: number): void {
    const current = Math.floor(now / bucketMs);
    if (Number.isNaN(epoch)) {
      epoch = current;
      return;
    }
    if (current <= epoch) return;
    const steps = Math.min(current - epoch, buckets);
    for (let s = 1; s <= steps; s++) {
      const base = slot(epoch + s) * channels;
      for (let c = 0; c < channels; c++) {
        totals[c] -= cells[base + c]!;
        cells[base + c] = 0;
      }
    }
    epoch = current;
  }

  return {
    add(channel, amount, now) {
      advance(now);
      cells[slot(epoch) * channels + channel] += amount;
      totals[channel] += amount;
    },
    sum(channel, now) {
      advance(now);
      return totals[channel]!;
    },
    clear() {
      cells.fill(0);
      totals.fill(0);
      epoch = Number.NaN;
    },
  };
}
