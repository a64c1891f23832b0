/**
 * A fixed-bucket latency histogram for the hot path: one array increment per observation, buckets
 * chosen for RPC (a loopback call takes 50–500 µs, a slow one seconds). The upper bounds are in
 * seconds, as Prometheus names them (`…_seconds`); observations are in milliseconds, as Callisto measures.
 */

/** Upper bounds of the buckets, seconds (the `le` labels), ascending; +Inf is implied. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const BOUNDS_MS = LATENCY_BUCKETS_SECONDS.map((seconds) => seconds * 1000);
const LAST = BOUNDS_MS.length;

export class LatencyHistogram {
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: number[] = new Array<number>(LAST + 1).fill(0);
  /** Sum of every observation, ms. */
  sumMs = 0;
  count = 0;

  observe(ms: number): void {
    let i = 0;
    while (i < LAST && ms > BOUNDS_MS[i]!) i++;
    this.counts[i]!++;
    this.sumMs += ms;
    this.count++;
  }

  /**
   * The `q` quantile (0..1), ms, interpolated linearly inside its bucket (as Prometheus'
   * `histogram_quantile` does); 0 when empty. Past the last bound, the last bound.
   */
  quantileMs(q: number): number {
    if (this.count === 0) return 0;
    const rank = q * this.count;
    let seen = 0;
    for (let i = 0; i <= LAST; i++) {
      const inBucket = this.counts[i]!;
      if (inBucket > 0 && seen + inBucket >= rank) {
        if (i === LAST) return BOUNDS_MS[LAST - 1]!;
        const lower = i === 0 ? 0 : BOUNDS_MS[i - 1]!;
        const upper = BOUNDS_MS[i]!;
        return lower + ((upper - lower) * (rank - seen)) / inBucket;
      }
      seen += inBucket;
    }
    return BOUNDS_MS[LAST - 1]!;
  }
}
