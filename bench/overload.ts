/**
 * The overload benchmark (`npm run bench:overload`, issue 28): O1, an open loop at a sweep of multiples
 * of a provider's measured capacity; O2, three providers behind one consumer, one of them slowed
 * (BENCH_OVERLOAD=O1 or O2 runs one of them). The provider (bench/overload/burner-server.ts, its own
 * process, pinned to CPU 0 when possible) serves `burn`: one turn of the event loop, then a fixed CPU
 * cost (BENCH_OVERLOAD_BURN_MS, default 1 ms). The harness process is the consumer, with the defaults
 * (failover with its retries, adaptive throttling): for each offered factor (BENCH_OVERLOAD_FACTORS,
 * default 0.5,1,2,4) and with the adaptive limit on (the default) and off, it measures the capacity with
 * a closed loop of 32 callers, then starts calls at that multiple of it for BENCH_OVERLOAD_MS (default
 * 4000), each with a deadline of BENCH_OVERLOAD_DEADLINE_MS (default 200), and reports the goodput
 * (calls answered within their deadline per second), the share refused (`Overloaded`, never run), the
 * latency of the admitted calls against the unloaded p99 (the 0.5x run's), and the calls that reached
 * the provider (retries included) per call offered. It stops by itself: every call has its deadline,
 * the provider is stopped after each run.
 *
 * O3 runs O1's open loop against a Moleculer provider (its TCP transporter, its defaults: no bulkhead,
 * no retries, a `requestTimeout` of the deadline), for comparison: Moleculer from bench/peers, installed
 * there on first use (overload/moleculer-peer.ts).
 */
import net from 'node:net';
import { callisto } from '../src/index.js';
import { describeTimeline, type OpenLoopResult, runOpenLoop } from './lib/open-loop.js';
import { choosePinning, startServer } from './lib/processes.js';
import {
  type BalanceRun,
  describeBalance,
  nominalCapacity,
  runBalance,
  startBalanceProviders,
} from './overload/balance-run.js';
import { ensurePeersInstalled, moleculerBroker } from './overload/moleculer-peer.js';
import { BURN_MS, OverloadBenchDef } from './overload/overload-service.js';
import { closedLoopRate, describeRun, type OverloadRun, runOverload } from './overload/run-overload.js';

const durationMs = Number(process.env['BENCH_OVERLOAD_MS'] ?? '4000') || 4_000;
const deadlineMs = Number(process.env['BENCH_OVERLOAD_DEADLINE_MS'] ?? '200') || 200;
const burnMs = Number(process.env['BENCH_OVERLOAD_BURN_MS'] ?? '1') || 1;
const factors = (process.env['BENCH_OVERLOAD_FACTORS'] ?? '0.5,1,2,4')
  .split(',')
  .map(Number)
  .filter((factor) => factor > 0);
const pinning = choosePinning(process.env['BENCH_PIN'] === '0');
const server = new URL('./overload/burner-server.ts', import.meta.url).pathname;
const only = process.env['BENCH_OVERLOAD'];
const fmt = (value: number, digits = 0) => value.toFixed(digits);

if (only === undefined || only === 'O1') await overloadO1();
if (only === undefined || only === 'O2') await balanceO2();
if (only === undefined || only === 'O3') await overloadMoleculer();
process.exit(0);

async function overloadO1(): Promise<void> {
  const rows: Array<{ limit: string; factor: number; run: OverloadRun }> = [];
  // the burner's CPU per call is BURN_MS times this factor
  process.env['BENCH_BURN_FACTOR'] = String(burnMs / BURN_MS);
  for (const factor of factors) {
    for (const on of [true, false]) {
      process.env['BENCH_ADAPTIVE_LIMIT'] = on ? '1' : '0';
      const running = await startServer(server, pinning, 30_000);
      const app = await callisto({
        application: 'bench-overload-client',
        logLevel: 'warn',
        load: { configFile: false, env: false },
      });
      try {
        const url = `127.0.0.1:${running.port}`;
        // the defaults: failover and its retries (counted in what reached the provider), throttling on
        const load = app.refer(OverloadBenchDef, { url, timeoutMs: deadlineMs });
        const report = app.refer(OverloadBenchDef, { url, adaptiveThrottling: false });
        const run = await runOverload({ load, report }, { factor, durationMs, deadlineMs });
        console.log(describeRun(`${factor}x, adaptive limit ${on ? 'on' : 'off'}`, run));
        if (process.env['BENCH_OVERLOAD_FAILURES'] === '1')
          console.log(run.failures.slice(0, 5), run.limiter);
        if (process.env['BENCH_OVERLOAD_TIMELINE'] === '1') console.log(describeTimeline(run.timeline));
        rows.push({ limit: on ? 'on' : 'off', factor, run });
      } finally {
        await app.close();
        await running.stop();
      }
    }
  }
  delete process.env['BENCH_BURN_FACTOR'];

  // the unloaded p99: the lowest factor's run with the limit on
  const unloaded = rows.find((row) => row.limit === 'on' && row.factor === Math.min(...factors));
  const unloadedP99 = unloaded?.run.admittedP99Ms ?? Number.NaN;
  console.log(
    `\nO1: open loop, ${burnMs} ms of CPU per call, ${deadlineMs} ms deadlines, ${durationMs} ms per run, default consumer (retries on) (pinning: ${pinning.note ?? 'server CPU 0'})`,
  );
  console.log(
    '| offered | adaptive limit | capacity calls/s | offered calls/s | goodput calls/s | goodput / capacity | refused | failed or late | admitted p50 ms | p99 ms | p99 / unloaded p99 | p99 after 1 s, ms | reached the provider / offered |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const { limit, factor, run } of rows) {
    console.log(
      `| ${factor}x | ${limit} | ${fmt(run.capacity)} | ${fmt(run.offeredPerSec)} | ${fmt(run.goodputPerSec)} | ${fmt((100 * run.goodputPerSec) / run.capacity)} % | ${fmt(100 * run.refusedShare, 1)} % | ${run.failed} of ${run.offered} | ${fmt(run.admittedP50Ms)} | ${fmt(run.admittedP99Ms)} | ${fmt(run.admittedP99Ms / unloadedP99, 1)} | ${fmt(run.settledP99Ms)} | ${fmt(run.reached / run.offered, 2)} |`,
    );
  }
}

/**
 * O2: three providers (own processes, not pinned: three servers do not fit two pinned cores), the third
 * slowed to 3x the CPU per call, behind one consumer (the harness) sending an open loop at 30 % and
 * 60 % of their nominal capacity (from CPU per call alone, one core each), each balancer in turn on the
 * same providers; each provider's share is what it executed.
 */
async function balanceO2(): Promise<void> {
  const slowdowns = [1, 1, 3];
  const providers = await startBalanceProviders(slowdowns, choosePinning(true));
  const runs: BalanceRun[] = [];
  try {
    const capacity = nominalCapacity(providers);
    for (const factor of [0.3, 0.6]) {
      for (const balancer of ['random', 'p2c'] as const) {
        const app = await callisto({
          application: 'bench-balance-client',
          logLevel: 'warn',
          load: { configFile: false, env: false },
        });
        try {
          await app.start();
          const run = await runBalance(app, providers, {
            balancer,
            ratePerSec: capacity * factor,
            durationMs: Math.min(durationMs, 3_000),
          });
          console.log(describeBalance(run, providers));
          runs.push(run);
        } finally {
          await app.close();
        }
      }
    }
  } finally {
    await Promise.all(providers.map((provider) => provider.running.stop()));
  }
  const ideal = slowdowns.map((s) => 1 / s).map((x, _i, all) => x / all.reduce((a, b) => a + b, 0));
  console.log(
    `\nO2: three providers, the third at 3x the CPU per call (capacity shares ${ideal.map((x) => `${fmt(100 * x)} %`).join(' / ')}), one consumer, open loop, 1 s deadlines`,
  );
  console.log(
    '| balancer | offered calls/s | share 1x | share 1x | share 3x (slowed) | goodput calls/s | refused | failed or late | p50 ms | p99 ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const run of runs) {
    const [a, b, c] = run.shares.map((share) => `${fmt(100 * share, 1)} %`);
    console.log(
      `| ${run.balancer} | ${fmt(run.ratePerSec)} | ${a} | ${b} | ${c} | ${fmt(run.goodputPerSec)} | ${fmt(100 * run.refusedShare, 1)} % | ${run.failed} of ${run.offered} | ${fmt(run.admittedP50Ms)} | ${fmt(run.admittedP99Ms)} |`,
    );
  }
}

/** A port free now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * O3: O1's open loop against a Moleculer provider (own process, pinned like O1's), the harness a
 * Moleculer client node with its defaults and the deadline as `requestTimeout`; what reached the
 * provider is what its `burn` action counted.
 */
async function overloadMoleculer(): Promise<void> {
  ensurePeersInstalled();
  const script = new URL('./overload/moleculer-burner.ts', import.meta.url).pathname;
  const rows: Array<{
    factor: number;
    run: OpenLoopResult & { capacity: number; offeredPerSec: number; reached: number };
  }> = [];
  process.env['BENCH_BURN_FACTOR'] = String(burnMs / BURN_MS);
  for (const factor of factors) {
    const ports = { serverPort: await freePort(), clientPort: await freePort() };
    process.env['BENCH_MOLECULER_PORTS'] = `${ports.serverPort},${ports.clientPort}`;
    const running = await startServer(script, pinning, 30_000);
    const broker = moleculerBroker('client', ports, { requestTimeout: deadlineMs });
    try {
      await broker.start();
      await broker.waitForServices(['burner'], 10_000);
      const burn = (i: number) => broker.call('burner.burn', { i });
      await closedLoopRate(() => burn(0), 300);
      const capacity = await closedLoopRate(() => burn(0), 1_000);
      const counts = async () =>
        ((await broker.call('burner.counts', {}, { timeout: 30_000 })) as { arrived: number }).arrived;
      const before = await counts();
      const result = await runOpenLoop({
        call: burn,
        ratePerSec: factor * capacity,
        durationMs,
        deadlineMs,
        isRefusal: () => false,
      });
      const reached = (await counts()) - before;
      const run = { ...result, capacity, offeredPerSec: factor * capacity, reached };
      console.log(
        `[overload] Moleculer ${factor}x: capacity ${fmt(capacity)}/s, goodput ${fmt(run.goodputPerSec)}/s (${fmt((100 * run.goodputPerSec) / capacity)} %), failed ${run.failed} of ${run.offered}, p99 ${fmt(run.admittedP99Ms)} ms`,
      );
      rows.push({ factor, run });
    } finally {
      await broker.stop();
      await running.stop();
    }
  }
  delete process.env['BENCH_BURN_FACTOR'];
  delete process.env['BENCH_MOLECULER_PORTS'];
  const unloaded = rows.find((row) => row.factor === Math.min(...factors));
  const unloadedP99 = unloaded?.run.admittedP99Ms ?? Number.NaN;
  console.log(
    `\nO3: O1's open loop against a Moleculer 0.14 provider (TCP transporter, its defaults), ${burnMs} ms of CPU per call, ${deadlineMs} ms deadlines (requestTimeout), ${durationMs} ms per run`,
  );
  console.log(
    '| offered | capacity calls/s | offered calls/s | goodput calls/s | goodput / capacity | failed or late | p50 ms | p99 ms | p99 / unloaded p99 | reached the provider / offered |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const { factor, run } of rows) {
    console.log(
      `| ${factor}x | ${fmt(run.capacity)} | ${fmt(run.offeredPerSec)} | ${fmt(run.goodputPerSec)} | ${fmt((100 * run.goodputPerSec) / run.capacity)} % | ${run.failed} of ${run.offered} | ${fmt(run.admittedP50Ms)} | ${fmt(run.admittedP99Ms)} | ${fmt(run.admittedP99Ms / unloadedP99, 1)} | ${fmt(run.reached / run.offered, 2)} |`,
    );
  }
}
