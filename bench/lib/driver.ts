/**
 * The closed-loop load driver shared by every system's client: it keeps `concurrency` calls in flight
 * (a new call starts as soon as one completes), records each call's latency in a preallocated
 * Float64Array, and reports throughput and percentiles. A system's client only says how to make one call.
 */
import { performance } from 'node:perf_hooks';

export interface ScenarioRunOptions {
  /** Makes call number `i` (0-based within its phase). */
  call: (i: number) => Promise<unknown>;
  /** Measured calls. */
  calls: number;
  /** Calls kept in flight. */
  concurrency: number;
  /** Calls run first and not measured. Default: 5% of `calls`, rounded up. */
  warmupCalls?: number;
  /** Called between the warm-up and the measured phase. */
  onMeasureStart?: () => void;
}

/** What a client prints, as one JSON line. */
export interface ScenarioResult {
  calls: number;
  seconds: number;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** CPU time (user + system) this client process used per measured call, in microseconds. */
  clientCpuUsPerCall: number;
  /** The message of the first failed call, when any failed. */
  firstError?: string;
  /** S8: the same unary load measured alone, before the stream opened. */
  alone?: { callsPerSec: number; p50Ms: number; p99Ms: number };
  /** S8: messages/s the stream delivered while the measured unary calls ran beside it. */
  streamMessagesPerSec?: number;
}

/** Runs the warm-up, then the measured phase. */
export async function runScenario(options: ScenarioRunOptions): Promise<ScenarioResult> {
  const { call, calls, concurrency } = options;
  if (!Number.isInteger(calls) || calls < 1)
    throw new RangeError(`calls must be a positive integer, got ${calls}`);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const warmupCalls = options.warmupCalls ?? Math.ceil(calls * 0.05);
  if (warmupCalls > 0) await runPhase(call, warmupCalls, concurrency, undefined);
  return measurePhase(options);
}

/** The measured phase alone (no warm-up): `calls` calls at `concurrency` in flight. */
export async function measurePhase(
  options: Omit<ScenarioRunOptions, 'warmupCalls'>,
): Promise<ScenarioResult> {
  const { call, calls, concurrency } = options;
  const latencies = new Float64Array(calls);
  options.onMeasureStart?.();
  const cpuBefore = process.cpuUsage();
  const phase = await runPhase(call, calls, concurrency, latencies);
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort();
  const result: ScenarioResult = {
    calls,
    seconds: phase.seconds,
    callsPerSec: calls / phase.seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors: phase.errors,
    clientCpuUsPerCall: (cpu.user + cpu.system) / calls,
  };
  if (phase.firstError !== undefined) result.firstError = phase.firstError;
  return result;
}

interface PhaseResult {
  seconds: number;
  errors: number;
  firstError: string | undefined;
}

/**
 * Keeps `concurrency` calls in flight until `calls` have completed. Callback style (no async loop per
 * slot) so that the driver itself costs as little as possible per call.
 */
function runPhase(
  call: (i: number) => Promise<unknown>,
  calls: number,
  concurrency: number,
  latencies: Float64Array | undefined,
): Promise<PhaseResult> {
  return new Promise((resolve) => {
    let next = 0;
    let done = 0;
    let errors = 0;
    let firstError: string | undefined;
    const started = performance.now();
    const finish = (i: number, start: number): void => {
      if (latencies !== undefined) latencies[i] = performance.now() - start;
      if (++done === calls) resolve({ seconds: (performance.now() - started) / 1000, errors, firstError });
      else if (next < calls) launch();
    };
    const launch = (): void => {
      const i = next++;
      const start = performance.now();
      let pending: Promise<unknown>;
      try {
        pending = call(i);
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        () => finish(i, start),
        (error: unknown) => {
          errors++;
          firstError ??= error instanceof Error ? error.message : String(error);
          finish(i, start);
        },
      );
    };
    for (let slot = 0; slot < Math.min(concurrency, calls); slot++) launch();
  });
}

/** Nearest-rank percentile (`q` in 0..1) of an ascending array; NaN when empty. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** A timed measurement (S5): what one client completed in its window. */
export interface TimedResult extends ScenarioResult {
  /** How long the window was, ms (calls still in flight at its end are not counted). */
  windowMs: number;
}

/**
 * Keeps `concurrency` calls in flight for `durationMs` and counts the calls completed inside the
 * window (S5: every client process measures the same window, so their calls/s compare for fairness).
 * Resolves once the calls in flight at the end have settled too.
 */
export function measureWindow(options: {
  call: (i: number) => Promise<unknown>;
  concurrency: number;
  durationMs: number;
}): Promise<TimedResult> {
  const { call, concurrency, durationMs } = options;
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  return new Promise((resolve) => {
    let next = 0;
    let inFlight = 0;
    let completed = 0;
    let errors = 0;
    let firstError: string | undefined;
    let open = true;
    let cpuUs = 0;
    setTimeout(() => {
      open = false;
      const cpu = process.cpuUsage(cpuBefore);
      cpuUs = cpu.user + cpu.system;
      if (inFlight === 0) settle();
    }, durationMs);
    const settle = (): void => {
      const sorted = Float64Array.from(latencies).sort();
      const seconds = durationMs / 1000;
      const result: TimedResult = {
        calls: completed,
        seconds,
        windowMs: durationMs,
        callsPerSec: completed / seconds,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        errors,
        clientCpuUsPerCall: completed === 0 ? Number.NaN : cpuUs / completed,
      };
      if (firstError !== undefined) result.firstError = firstError;
      resolve(result);
    };
    const finish = (start: number, failed: unknown): void => {
      inFlight--;
      if (open) {
        if (failed === undefined) {
          completed++;
          latencies.push(performance.now() - start);
        } else {
          errors++;
          firstError ??= failed instanceof Error ? failed.message : String(failed);
        }
        launch();
      } else if (inFlight === 0) settle();
    };
    const launch = (): void => {
      const i = next++;
      const start = performance.now();
      inFlight++;
      let pending: Promise<unknown>;
      try {
        pending = call(i);
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        () => finish(start, undefined),
        (error: unknown) => finish(start, error ?? new Error('rejected')),
      );
    };
    for (let slot = 0; slot < concurrency; slot++) launch();
  });
}
