/**
 * An open-loop load generator: calls start at a constant rate whatever happens to the ones before (as
 * independent users arrive), unlike the closed-loop driver (driver.ts), whose callers wait for an answer
 * before the next call and so can never offer more than the server serves. Used by the overload
 * benchmark (bench/overload.ts) and test/overload/open-loop-overload.test.ts.
 *
 * Every `tickMs` the calls due since the start (rate × elapsed) and not yet started are started, so a
 * late timer (a saturated event loop in the same process) sends the calls it owes at once and the rate
 * holds on average. Each call's latency is measured from its start; a call is good when it answered
 * within `deadlineMs`, refused when `isRefusal` says its error is a refusal (never run), failed
 * otherwise (a timeout, mostly).
 */

export interface OpenLoopOptions {
  /** Starts call number `i`; rejects on failure. */
  readonly call: (i: number) => Promise<unknown>;
  readonly ratePerSec: number;
  readonly durationMs: number;
  /** An answer later than this does not count as good. */
  readonly deadlineMs: number;
  /** Whether a failure is a refusal (the call never ran). */
  readonly isRefusal: (error: unknown) => boolean;
  /** How often the due calls are started, ms. Default 5. */
  readonly tickMs?: number;
}

export interface OpenLoopResult {
  /** Calls started. */
  readonly offered: number;
  /** Answered within the deadline. */
  readonly good: number;
  readonly refused: number;
  /** Failed otherwise, or answered late. */
  readonly failed: number;
  /** Good calls per second of the offered period. */
  readonly goodputPerSec: number;
  readonly refusedShare: number;
  /** Latency of the calls that were not refused (answered, late or failed), ms. */
  readonly admittedP50Ms: number;
  readonly admittedP95Ms: number;
  readonly admittedP99Ms: number;
  /**
   * The p99 of the calls not refused that started after the first `SETTLED_AFTER_MS` (0 for none): the
   * steady state, without the step into the load.
   */
  readonly settledP99Ms: number;
  /** A few failure messages, for diagnosis. */
  readonly failures: readonly string[];
  /** The calls by when they started, in slices of `TIMELINE_SLICE_MS`: how a run went over time. */
  readonly timeline: readonly TimelineSlice[];
}

/** The calls that started in one slice of the run and what became of them. */
export interface TimelineSlice {
  readonly fromMs: number;
  readonly offered: number;
  readonly good: number;
  readonly refused: number;
  readonly failed: number;
  /** Of the calls not refused, ms (0 for none). */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export const TIMELINE_SLICE_MS = 250;
/** Where a run's steady state is taken to start, ms after its first call. */
export const SETTLED_AFTER_MS = 1_000;

/** Nearest-rank percentile of sorted values; 0 for none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

type Outcome = 'good' | 'refused' | 'failed';

/** One call of a run: when it started (ms into the run), what became of it, its latency (NaN: refused). */
interface CallRecord {
  readonly startedMs: number;
  outcome: Outcome;
  latencyMs: number;
}

/** The calls' counts by outcome, and the sorted latencies of those not refused. */
function tally(calls: readonly CallRecord[]): Record<Outcome, number> & { latencies: number[] } {
  const counts = { good: 0, refused: 0, failed: 0, latencies: [] as number[] };
  for (const call of calls) {
    counts[call.outcome]++;
    if (call.outcome !== 'refused') counts.latencies.push(call.latencyMs);
  }
  counts.latencies.sort((a, b) => a - b);
  return counts;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const tickMs = options.tickMs ?? 5;
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  const calls: CallRecord[] = [];
  let started = 0;
  const start = performance.now();

  const launch = (i: number): void => {
    const at = performance.now();
    const call: CallRecord = { startedMs: at - start, outcome: 'refused', latencyMs: Number.NaN };
    calls[i] = call;
    pending.push(
      options.call(i).then(
        () => {
          call.latencyMs = performance.now() - at;
          call.outcome = call.latencyMs <= options.deadlineMs ? 'good' : 'failed';
        },
        (error: unknown) => {
          if (options.isRefusal(error)) return;
          call.latencyMs = performance.now() - at;
          call.outcome = 'failed';
          if (failures.length < 5) failures.push(error instanceof Error ? error.message : String(error));
        },
      ),
    );
  };

  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const elapsed = Math.min(performance.now() - start, options.durationMs);
      const due = Math.floor((elapsed * options.ratePerSec) / 1000);
      while (started < due) launch(started++);
      if (elapsed >= options.durationMs) resolve();
      else setTimeout(tick, tickMs);
    };
    tick();
  });
  await Promise.all(pending);
  const all = tally(calls);
  const settled = tally(calls.filter((call) => call.startedMs >= SETTLED_AFTER_MS));
  return {
    offered: started,
    good: all.good,
    refused: all.refused,
    failed: all.failed,
    goodputPerSec: (all.good * 1000) / options.durationMs,
    refusedShare: started === 0 ? 0 : all.refused / started,
    admittedP50Ms: percentile(all.latencies, 0.5),
    admittedP95Ms: percentile(all.latencies, 0.95),
    admittedP99Ms: percentile(all.latencies, 0.99),
    settledP99Ms: percentile(settled.latencies, 0.99),
    failures,
    timeline: timelineOf(calls),
  };
}

/** A run's timeline as lines (`BENCH_OVERLOAD_TIMELINE=1`). */
export function describeTimeline(timeline: readonly TimelineSlice[]): string {
  return timeline
    .map(
      (slice) =>
        `  ${String(slice.fromMs).padStart(5)} ms: offered ${slice.offered}, good ${slice.good}, refused ${slice.refused}, failed ${slice.failed}, p50 ${slice.p50Ms.toFixed(0)} ms, p99 ${slice.p99Ms.toFixed(0)} ms`,
    )
    .join('\n');
}

function timelineOf(calls: readonly CallRecord[]): TimelineSlice[] {
  const slices: CallRecord[][] = [];
  for (const call of calls) {
    const index = Math.floor(call.startedMs / TIMELINE_SLICE_MS);
    while (slices.length <= index) slices.push([]);
    slices[index]!.push(call);
  }
  return slices.map((slice, index) => {
    const { latencies, ...counts } = tally(slice);
    return {
      fromMs: index * TIMELINE_SLICE_MS,
      offered: slice.length,
      ...counts,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
    };
  });
}
