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
  /** A few failure messages, for diagnosis. */
  readonly failures: readonly string[];
}

/** Nearest-rank percentile of sorted values; 0 for none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const tickMs = options.tickMs ?? 5;
  const latencies: number[] = [];
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  let good = 0;
  let refused = 0;
  let failed = 0;
  let started = 0;
  const start = performance.now();

  const launch = (i: number): void => {
    const at = performance.now();
    pending.push(
      options.call(i).then(
        () => {
          const ms = performance.now() - at;
          latencies.push(ms);
          if (ms <= options.deadlineMs) good++;
          else failed++;
        },
        (error: unknown) => {
          if (options.isRefusal(error)) {
            refused++;
            return;
          }
          latencies.push(performance.now() - at);
          failed++;
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
  latencies.sort((a, b) => a - b);
  return {
    offered: started,
    good,
    refused,
    failed,
    goodputPerSec: (good * 1000) / options.durationMs,
    refusedShare: started === 0 ? 0 : refused / started,
    admittedP50Ms: percentile(latencies, 0.5),
    admittedP95Ms: percentile(latencies, 0.95),
    admittedP99Ms: percentile(latencies, 0.99),
    failures,
  };
}
