/**
 * The worker-executor benchmark (`npm run bench:workers`, issue 16): a CPU-heavy method (`crunch`,
 * about 1 ms of CPU per call) at 64 calls in flight with the method on the loop and on worker threads,
 * and the latency of a cheap method (`ping`, 1 call in flight) on the same provider while `crunch` is
 * loaded, with and without workers. Server CPU is the provider process's (all its threads), per
 * measured call. BENCH_SCALE scales the call counts; BENCH_PIN=0 turns pinning off (with pinning the
 * provider and its threads share CPU 0, the clients CPU 1).
 */
import { choosePinning, runClient, startServer } from './lib/processes.js';

const scale = Number(process.env['BENCH_SCALE'] ?? '1') || 1;
const pinning = choosePinning(process.env['BENCH_PIN'] === '0');
const server = new URL('./workers/heavy-server.ts', import.meta.url).pathname;
const client = new URL('./workers/heavy-client.ts', import.meta.url).pathname;
const HEAVY_CALLS = Math.max(200, Math.round(5_000 * scale));
const CHEAP_CALLS = Math.max(50, Math.round(500 * scale));

interface Row {
  scenario: string;
  executor: string;
  callsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuUsPerCall: number | undefined;
  errors: number;
}

const rows: Row[] = [];
for (const executor of ['loop', 'worker']) {
  process.env['BENCH_EXECUTOR'] = executor;
  // H1: crunch at 64 in flight
  {
    const running = await startServer(server, pinning, 30_000);
    let cpuAtStart: number | undefined;
    const result = await runClient(
      client,
      ['crunch', String(running.port), String(HEAVY_CALLS), '64'],
      pinning,
      600_000,
      () => {
        cpuAtStart = running.cpuMs();
      },
    );
    const cpuAtEnd = running.cpuMs();
    await running.stop();
    rows.push({
      scenario: 'H1 crunch, 64 in flight',
      executor,
      callsPerSec: result.callsPerSec,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      serverCpuUsPerCall:
        cpuAtStart === undefined || cpuAtEnd === undefined
          ? undefined
          : ((cpuAtEnd - cpuAtStart) * 1000) / result.calls,
      errors: result.errors,
    });
  }
  // H2: ping at 1 in flight while crunch runs at 64 in flight
  {
    const running = await startServer(server, pinning, 30_000);
    let loaded: () => void = () => {};
    const measuring = new Promise<void>((resolve) => {
      loaded = resolve;
    });
    // heavy load that outlasts the cheap client (ended by stopping the server)
    const background = runClient(
      client,
      ['crunch', String(running.port), String(HEAVY_CALLS * 20), '64'],
      pinning,
      600_000,
      () => loaded(),
    );
    void background.then(
      () => loaded(),
      () => loaded(),
    );
    // the cheap client starts once the heavy one measures (the provider is loaded)
    await measuring;
    const cheap = await runClient(
      client,
      ['ping', String(running.port), String(CHEAP_CALLS), '1'],
      pinning,
      600_000,
    );
    await running.stop();
    await background.catch(() => undefined);
    rows.push({
      scenario: 'H2 ping, 1 in flight, crunch loaded',
      executor,
      callsPerSec: cheap.callsPerSec,
      p50Ms: cheap.p50Ms,
      p99Ms: cheap.p99Ms,
      serverCpuUsPerCall: undefined,
      errors: cheap.errors,
    });
  }
}

const fmt = (value: number | undefined, digits = 2) => (value === undefined ? '—' : value.toFixed(digits));
console.log(`\nworker executor benchmark (pinning: ${pinning.note ?? 'server CPU 0, clients CPU 1'})`);
console.log('| scenario | executor | calls/s | p50 ms | p99 ms | server CPU µs/call | errors |');
console.log('|---|---|---|---|---|---|---|');
for (const row of rows) {
  console.log(
    `| ${row.scenario} | ${row.executor} | ${fmt(row.callsPerSec, 0)} | ${fmt(row.p50Ms)} | ${fmt(row.p99Ms)} | ${fmt(row.serverCpuUsPerCall, 0)} | ${row.errors} |`,
  );
}
