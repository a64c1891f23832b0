/**
 * The overload benchmark (`npm run bench:overload`, issue 28): O1, an open loop at twice a provider's
 * measured capacity. The provider (bench/overload/burner-server.ts, its own process, pinned to CPU 0
 * when possible) serves `burn`: one turn of the event loop, then 4 ms of CPU. The harness process is the
 * consumer: it measures the capacity with a closed loop of 32 callers, then starts calls at twice that
 * rate for BENCH_OVERLOAD_MS (default 4000), each with a 1 s deadline, and reports the goodput (calls
 * answered within their deadline per second), the share refused (`Overloaded`, never run) and the
 * latency of the admitted calls — with the adaptive limit on (the default) and off. It stops by itself:
 * every call has its deadline, the provider is stopped after each run.
 */
import { callisto } from '../src/index.js';
import { choosePinning, startServer } from './lib/processes.js';
import { OverloadBenchDef } from './overload/overload-service.js';
import { describeRun, type OverloadRun, runOverload } from './overload/run-overload.js';

const durationMs = Number(process.env['BENCH_OVERLOAD_MS'] ?? '4000') || 4_000;
const pinning = choosePinning(process.env['BENCH_PIN'] === '0');
const server = new URL('./overload/burner-server.ts', import.meta.url).pathname;

const rows: Array<{ limit: string; run: OverloadRun }> = [];
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
    const load = app.refer(OverloadBenchDef, { url, retries: 0, timeoutMs: 1_000 });
    const report = app.refer(OverloadBenchDef, { url, adaptiveThrottling: false });
    const run = await runOverload({ load, report }, { factor: 2, durationMs, deadlineMs: 1_000 });
    console.log(describeRun(on ? 'adaptive limit on' : 'adaptive limit off', run));
    rows.push({ limit: on ? 'on' : 'off', run });
  } finally {
    await app.close();
    await running.stop();
  }
}

const fmt = (value: number, digits = 0) => value.toFixed(digits);
console.log(
  `\nO1: open loop at 2x capacity for ${durationMs} ms, 1 s deadlines (pinning: ${pinning.note ?? 'server CPU 0'})`,
);
console.log(
  '| adaptive limit | capacity calls/s | offered calls/s | goodput calls/s | goodput / capacity | refused | failed or late | admitted p50 ms | p95 ms | p99 ms |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const { limit, run } of rows) {
  console.log(
    `| ${limit} | ${fmt(run.capacity)} | ${fmt(run.offeredPerSec)} | ${fmt(run.goodputPerSec)} | ${fmt((100 * run.goodputPerSec) / run.capacity)} % | ${fmt(100 * run.refusedShare, 1)} % | ${run.failed} of ${run.offered} | ${fmt(run.admittedP50Ms)} | ${fmt(run.admittedP95Ms)} | ${fmt(run.admittedP99Ms)} |`,
  );
}
process.exit(0);
