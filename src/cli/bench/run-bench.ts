/**
 * Runs a benchmark: `concurrency` workers, each calling as soon as its previous call ended, until the
 * number of calls or the duration is reached (whichever comes first) or the run is aborted. Bounded
 * by construction: no call starts after the limit, and the calls in flight end by their timeout.
 * Latency counts successful calls; failed ones are counted by error code.
 */
import { RpcError } from '../../index.js';
import { createLatencyRecorder, type LatencyRecorder } from './latency-recorder.js';

export interface BenchPlan {
  readonly concurrency: number;
  /** Stop after this many calls. */
  readonly calls?: number | undefined;
  /** Stop starting calls after this long, ms. */
  readonly durationMs?: number | undefined;
}

export interface BenchProgress {
  readonly started: number;
  readonly ok: number;
  readonly failed: number;
  readonly elapsedMs: number;
}

export interface BenchOutcome {
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly ok: number;
  readonly failed: number;
  readonly errors: Record<string, number>;
  readonly latency: LatencyRecorder;
  readonly interrupted: boolean;
}

export interface BenchRun {
  progress(): BenchProgress;
  readonly done: Promise<BenchOutcome>;
}

export function runBench(call: () => Promise<unknown>, plan: BenchPlan, signal?: AbortSignal): BenchRun {
  const latency = createLatencyRecorder();
  const errors: Record<string, number> = {};
  const startedAt = new Date();
  const start = performance.now();
  const deadline = plan.durationMs === undefined ? Number.POSITIVE_INFINITY : start + plan.durationMs;
  let started = 0;
  let ok = 0;
  let failed = 0;

  const more = (): boolean =>
    !signal?.aborted && (plan.calls === undefined || started < plan.calls) && performance.now() < deadline;

  const worker = async (): Promise<void> => {
    while (more()) {
      started++;
      const t0 = performance.now();
      try {
        await call();
        latency.record(performance.now() - t0);
        ok++;
      } catch (error) {
        failed++;
        const code = RpcError.is(error) ? error.code : 'NotRpcError';
        errors[code] = (errors[code] ?? 0) + 1;
      }
    }
  };

  const done = Promise.all(Array.from({ length: plan.concurrency }, worker)).then(
    (): BenchOutcome => ({
      startedAt,
      durationMs: performance.now() - start,
      ok,
      failed,
      errors,
      latency,
      interrupted: signal?.aborted ?? false,
    }),
  );
  return {
    progress: () => ({ started, ok, failed, elapsedMs: performance.now() - start }),
    done,
  };
}
