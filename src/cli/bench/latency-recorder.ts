/**
 * Latencies of a benchmark: percentiles from Node's HDR histogram (`perf_hooks.createHistogram`, 3
 * significant digits, values recorded in microseconds), and counts in fixed buckets for the printed
 * histogram. Recording is a few arithmetic operations: no allocation per call.
 */
import { createHistogram } from 'node:perf_hooks';

/** Upper bounds of the printed histogram's buckets, ms (1-2-5 steps); the last bucket is above them. */
export const BUCKET_BOUNDS_MS = [
  0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000,
];

export interface LatencySummary {
  readonly min: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** One bucket of the histogram: calls that took at most `upToMs` (more than the bound before); `null` for the rest. */
export interface LatencyBucket {
  readonly upToMs: number | null;
  readonly count: number;
}

export interface LatencyRecorder {
  record(ms: number): void;
  readonly count: number;
  /** Undefined when nothing was recorded. */
  summary(): LatencySummary | undefined;
  /** From the first bucket with a call to the last one with a call. */
  buckets(): LatencyBucket[];
}

export function createLatencyRecorder(): LatencyRecorder {
  const histogram = createHistogram();
  const counts = new Array<number>(BUCKET_BOUNDS_MS.length + 1).fill(0);
  let sum = 0;
  let count = 0;
  const ms = (micros: number) => micros / 1_000;
  return {
    record(latencyMs) {
      histogram.record(Math.max(1, Math.round(latencyMs * 1_000)));
      sum += latencyMs;
      count++;
      let bucket = 0;
      while (bucket < BUCKET_BOUNDS_MS.length && latencyMs > BUCKET_BOUNDS_MS[bucket]!) bucket++;
      counts[bucket]!++;
    },
    get count() {
      return count;
    },
    summary() {
      if (count === 0) return undefined;
      return {
        min: ms(histogram.min),
        mean: sum / count,
        p50: ms(histogram.percentile(50)),
        p90: ms(histogram.percentile(90)),
        p99: ms(histogram.percentile(99)),
        p999: ms(histogram.percentile(99.9)),
        max: ms(histogram.max),
      };
    },
    buckets() {
      const first = counts.findIndex((n) => n > 0);
      if (first === -1) return [];
      const last = counts.length - 1 - [...counts].reverse().findIndex((n) => n > 0);
      return counts
        .slice(first, last + 1)
        .map((n, i) => ({ upToMs: BUCKET_BOUNDS_MS[first + i] ?? null, count: n }));
    },
  };
}
