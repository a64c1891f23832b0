/**
 * What each observability setting costs, in CPU per call: a provider and a consumer in one process over
 * TCP (loopback), S2's workload (`getUser(i)`, 256 in flight), each variant run in turn for several
 * rounds (interleaved, so a busy machine slows them alike), median of the rounds. CPU per call is
 * `process.cpuUsage()` over the measured calls: both sides together, steadier than calls/s on a shared
 * machine. The SDK variants run last (registering an SDK is process-wide).
 *
 *   npx tsx bench/observe-cost.ts [calls per round = 40000] [rounds = 5]
 */
import type { AppOptions } from '../src/index.js';
import { callisto } from '../src/index.js';
import { benchService } from './lib/scenarios.js';
import { registerTracingSdk } from './lib/tracing-sdk.js';
import { BenchServiceDef } from './systems/callisto/service.js';

const calls = Number(process.argv[2] ?? 40_000);
const rounds = Number(process.argv[3] ?? 5);
const inFlight = 256;
const QUIET: AppOptions = { logLevel: 'warn', load: { configFile: false, env: false } };

async function measure(options: AppOptions): Promise<{ cpuUsPerCall: number; callsPerSec: number }> {
  const server = await callisto({ ...QUIET, ...options });
  server.provide(BenchServiceDef, benchService);
  await server.start();
  const client = await callisto({ ...QUIET, ...options });
  const ref = client.refer(BenchServiceDef, { url: `127.0.0.1:${server.port}`, timeoutMs: 30_000 });
  const run = async (n: number) => {
    let next = 0;
    const worker = async () => {
      while (next < n) await ref.getUser(next++);
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  };
  await run(Math.max(2_000, calls / 10));
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run(calls);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await client.close();
  await server.close();
  return { cpuUsPerCall: (used.user + used.system) / calls, callsPerSec: calls / seconds };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function compare(variants: Record<string, AppOptions>): Promise<void> {
  const results = new Map<string, number[]>(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, options] of Object.entries(variants))
      results.get(name)!.push((await measure(options)).cpuUsPerCall);
  }
  const base = median(results.values().next().value!);
  for (const [name, values] of results) {
    const m = median(values);
    console.log(
      `${name.padEnd(34)} ${m.toFixed(2).padStart(6)} µs/call  ${(((m - base) / base) * 100).toFixed(1).padStart(5)}%  (rounds: ${values.map((v) => v.toFixed(1)).join(' ')})`,
    );
  }
}

console.log(
  `CPU per call, provider + consumer in one process, ${calls} calls x ${rounds} rounds, ${inFlight} in flight`,
);
await compare({
  'metrics off, tracing off': { metrics: false, tracing: false },
  'metrics off, tracing (no SDK)': { metrics: false },
  'default: metrics, tracing (no SDK)': {},
  'default + asyncCallContext': { asyncCallContext: true },
});
registerTracingSdk(0.01);
console.log('with an OpenTelemetry SDK registered (1% parent-based sampling, dropping exporter):');
await compare({
  'metrics off, tracing off': { metrics: false, tracing: false },
  'default: metrics, tracing (1% sampled)': {},
});
process.exit(0);
