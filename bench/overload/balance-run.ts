/**
 * The balancing scenario (O2, issue 28): one consumer in front of several `bench.Overload` providers
 * (burner-server.ts, each its own process), one of them slowed (BENCH_BURN_FACTOR: its calls burn 3×
 * the CPU), offered an open loop at a fixed rate; what each provider executed is read from its own
 * `limiter()` report before and after, so each one's share of the traffic is what it ran, whoever
 * counted. Shared by bench/overload.ts and test/overload/load-aware-balancing.test.ts.
 */
import type { CallistoApp, LoadBalancerName, Remote } from '../../src/index.js';
import { type OpenLoopResult, runOpenLoop } from '../lib/open-loop.js';
import { type Pinning, type RunningServer, startServer } from '../lib/processes.js';
import { BURN_MS, type OverloadBench, OverloadBenchDef } from './overload-service.js';
import { closedLoopRate, isOverloadRefusal } from './run-overload.js';

const SERVER = new URL('./burner-server.ts', import.meta.url).pathname;

export interface BalanceProvider {
  readonly address: string;
  /** CPU per call as a multiple of BURN_MS. */
  readonly slowdown: number;
  readonly running: RunningServer;
}

/** Starts one provider process per entry of `slowdowns` (1: normal, 3: three times the CPU per call). */
export async function startBalanceProviders(
  slowdowns: readonly number[],
  pinning: Pinning,
): Promise<BalanceProvider[]> {
  const started: BalanceProvider[] = [];
  try {
    for (const slowdown of slowdowns) {
      process.env['BENCH_BURN_FACTOR'] = String(slowdown);
      const running = await startServer(SERVER, pinning, 30_000);
      started.push({ address: `127.0.0.1:${running.port}`, slowdown, running });
    }
  } catch (error) {
    await Promise.all(started.map((provider) => provider.running.stop()));
    throw error;
  } finally {
    delete process.env['BENCH_BURN_FACTOR'];
  }
  return started;
}

/** Calls/s the providers can serve together, from their CPU per call alone (one core each). */
export function nominalCapacity(providers: readonly BalanceProvider[]): number {
  return providers.reduce((sum, provider) => sum + 1000 / (BURN_MS * provider.slowdown), 0);
}

export interface BalanceRunOptions {
  /** The consumer's balancer (`loadbalance`). */
  readonly balancer: LoadBalancerName;
  readonly ratePerSec: number;
  readonly durationMs: number;
  /** Default 1000. */
  readonly deadlineMs?: number;
}

export interface BalanceRun extends OpenLoopResult {
  readonly balancer: string;
  readonly ratePerSec: number;
  /** Calls each provider executed during the run, in the order of the providers. */
  readonly executed: readonly number[];
  /** Each provider's share of what they executed together, 0..1. */
  readonly shares: readonly number[];
}

/** One open-loop run through `app` with `options.balancer` over every provider. */
export async function runBalance(
  app: CallistoApp,
  providers: readonly BalanceProvider[],
  options: BalanceRunOptions,
): Promise<BalanceRun> {
  const deadlineMs = options.deadlineMs ?? 1_000;
  const urls = providers.map((provider) => provider.address);
  const load: Remote<OverloadBench> = app.refer(OverloadBenchDef, {
    url: urls,
    loadbalance: options.balancer,
    retries: 0,
    timeoutMs: deadlineMs,
  });
  const reports = providers.map((provider) =>
    app.refer(OverloadBenchDef, { url: provider.address, adaptiveThrottling: false, timeoutMs: 30_000 }),
  );
  const executed = async () => Promise.all(reports.map(async (ref) => (await ref.limiter()).executed));
  // warm up: connections, JIT, and the balancer's latency view
  await closedLoopRate(() => load.burn(0), 500, 8);
  const before = await executed();
  const result = await runOpenLoop({
    call: (i) => load.burn(i),
    ratePerSec: options.ratePerSec,
    durationMs: options.durationMs,
    deadlineMs,
    isRefusal: isOverloadRefusal,
  });
  const after = await executed();
  const ran = after.map((count, i) => count - before[i]!);
  const total = ran.reduce((sum, count) => sum + count, 0);
  return {
    ...result,
    balancer: options.balancer,
    ratePerSec: options.ratePerSec,
    executed: ran,
    shares: ran.map((count) => (total === 0 ? 0 : count / total)),
  };
}

export function describeBalance(run: BalanceRun, providers: readonly BalanceProvider[]): string {
  const shares = run.shares
    .map((share, i) => `${providers[i]!.slowdown}x: ${(100 * share).toFixed(1)} %`)
    .join(', ');
  return (
    `[balance] ${run.balancer} at ${run.ratePerSec.toFixed(0)}/s: shares ${shares}; goodput ${run.goodputPerSec.toFixed(0)}/s, ` +
    `refused ${(100 * run.refusedShare).toFixed(1)} %, failed ${run.failed} of ${run.offered}, ` +
    `p50 ${run.admittedP50Ms.toFixed(0)} ms p99 ${run.admittedP99Ms.toFixed(0)} ms`
  );
}
