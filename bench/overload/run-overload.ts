/**
 * One overload run against a `bench.Overload` provider (burner-server.ts), shared by the benchmark
 * (bench/overload.ts) and test/overload/open-loop-overload.test.ts: the provider's capacity measured with
 * a closed loop, then an open loop at `factor` times it for `durationMs`, each call with a deadline of
 * `deadlineMs`.
 */
import type { Remote } from '../../src/index.js';
import { RpcError, withOptions } from '../../src/index.js';
import { type OpenLoopResult, runOpenLoop } from '../lib/open-loop.js';
import type { LimiterReport, OverloadBench } from './overload-service.js';

export interface OverloadRunOptions {
  /** Offered load as a multiple of the measured capacity. Default 2. */
  readonly factor?: number;
  /** Default 3000. */
  readonly durationMs?: number;
  /** Default 1000 (the reference's timeout must be the same). */
  readonly deadlineMs?: number;
}

export interface OverloadRun extends OpenLoopResult {
  /** Calls/s a closed loop of 32 callers was answered at. */
  readonly capacity: number;
  readonly offeredPerSec: number;
  /**
   * What reached the provider during the open loop, as a multiple of its capacity: below the offered
   * factor when the consumer's side (its process, the network) could not deliver the load.
   */
  readonly deliveredFactor: number;
  readonly limiter: LimiterReport;
  /** Calls that reached the provider during the open loop, retries included. */
  readonly reached: number;
}

/** Refused by the provider's limit or by the consumer's adaptive throttling: never run. */
export const isOverloadRefusal = (error: unknown): boolean =>
  RpcError.is(error) &&
  error.code === 'Overloaded' &&
  (error.details['shed'] === 'limit' || error.details['shed'] === 'throttled');

/** Calls per second answered to a closed loop of `callers` for `ms` (failures are not counted). */
export async function closedLoopRate(
  call: () => Promise<unknown>,
  ms: number,
  callers = 32,
): Promise<number> {
  let done = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        await call().then(
          () => done++,
          () => undefined,
        );
      }
    }),
  );
  return (done * 1000) / ms;
}

/**
 * `load` carries the calls; `report` (a reference without adaptive throttling, which would refuse it
 * after the provider's refusals) asks the provider for its limiter's figures at the end.
 */
export async function runOverload(
  refs: { load: Remote<OverloadBench>; report: Remote<OverloadBench> },
  options: OverloadRunOptions = {},
): Promise<OverloadRun> {
  const ref = refs.load;
  const factor = options.factor ?? 2;
  const durationMs = options.durationMs ?? 3_000;
  const deadlineMs = options.deadlineMs ?? 1_000;
  await closedLoopRate(() => ref.burn(0), 300);
  const capacity = await closedLoopRate(() => ref.burn(0), 1_000);
  const offeredPerSec = factor * capacity;
  const report = () => withOptions(refs.report, { timeoutMs: 30_000 }).limiter();
  const before = await report();
  const result = await runOpenLoop({
    call: (i) => ref.burn(i),
    ratePerSec: offeredPerSec,
    durationMs,
    deadlineMs,
    isRefusal: isOverloadRefusal,
  });
  // after the provider worked through what it queued
  const limiter = await report();
  const reached = limiter.arrived - before.arrived;
  const deliveredFactor = reached / ((capacity * durationMs) / 1000);
  return { ...result, capacity, offeredPerSec, deliveredFactor, limiter, reached };
}

export function describeRun(label: string, run: OverloadRun): string {
  return (
    `[overload] ${label}: capacity ${run.capacity.toFixed(0)}/s, offered ${run.offeredPerSec.toFixed(0)}/s ` +
    `(${run.offered} calls, ${run.deliveredFactor.toFixed(1)}x capacity reached the provider): goodput ${run.goodputPerSec.toFixed(0)}/s ` +
    `(${((100 * run.goodputPerSec) / run.capacity).toFixed(0)} % of capacity), refused ${(100 * run.refusedShare).toFixed(1)} %, ` +
    `failed ${run.failed}, admitted p50 ${run.admittedP50Ms.toFixed(0)} ms p95 ${run.admittedP95Ms.toFixed(0)} ms p99 ${run.admittedP99Ms.toFixed(0)} ms; ` +
    `limit ${run.limiter.on ? `${run.limiter.limit}, refused ${run.limiter.refused}` : 'off'}`
  );
}
