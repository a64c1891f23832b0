/**
 * A fixed-bucket latency histogram for the hot path: one array increment per observation, buckets
 * chosen for RPC (a loopback call takes 50–500 µs, a slow one seconds). The upper bounds are in
 * seconds, as Prometheus names them (`…_seconds`); observations are in milliseconds, as Callisto measures.
 */

/** Upper bounds of the buckets, seconds (the `le` labels), ascending; +Inf is implied. */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Upper bounds of the buckets of stream durations, seconds: a stream lives from milliseconds (a short
 * download) to hours (a subscription).
 */
export const STREAM_DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.01,
  0.1,
  0.5,
  1,
  5,
  10,
  30,
  60,
  300,
  900,
  1800,
  3600,
  4 * 3600,
];

const toMs = (bounds: readonly number[]): readonly number[] => bounds.map((seconds) => seconds * 1000);
const LATENCY_BOUNDS_MS = toMs(LATENCY_BUCKETS_SECONDS);

export class LatencyHistogram {
  /** The buckets' upper bounds, seconds (the `le` labels), ascending; +Inf is implied. */
  readonly boundsSeconds: readonly number[];
  readonly #boundsMs: readonly number[];
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  readonly counts: number[];
  /** Sum of every observation, ms. */
  sumMs = 0;
  count = 0;

  /** `boundsSeconds`: the buckets (default the call latency buckets, LATENCY_BUCKETS_SECONDS). */
  constructor(boundsSeconds: readonly number[] = LATENCY_BUCKETS_SECONDS) {
    this.boundsSeconds = boundsSeconds;
    this.#boundsMs = boundsSeconds === LATENCY_BUCKETS_SECONDS ? LATENCY_BOUNDS_MS : toMs(boundsSeconds);
    this.counts = new Array<number>(boundsSeconds.length + 1).fill(0);
  }

  observe(ms: number): void {
    const bounds = this.#boundsMs;
    const last = bounds.length;
    let i = 0;
    while (i < last && ms > bounds[i]!) i++;
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
    const bounds = this.#boundsMs;
    const last = bounds.length;
    const rank = q * this.count;
    let seen = 0;
    for (let i = 0; i <= last; i++) {
      const inBucket = this.counts[i]!;
      if (inBucket > 0 && seen + inBucket >= rank) {
        if (i === last) return bounds[last - 1]!;
        const lower = i === 0 ? 0 : bounds[i - 1]!;
        const upper = bounds[i]!;
        return lower + ((upper - lower) * (rank - seen)) / inBucket;
      }
      seen += inBucket;
    }
    return bounds[last - 1]!;
  }
}
