/**
 * What context across hops costs (docs/cluster.md, "Context across hops"), in CPU per call: S2's
 * workload (`getUser(i)`, 256 in flight) between a provider app and a consumer app in one process over
 * loopback TCP, each variant in a process of its own (an AsyncLocalStorage, once entered, changes the
 * cost of every promise of its process), the variants interleaved round by round, median of the rounds:
 *
 * - `plain`: the provider app only provides (no nested calls possible): the hot path with no handler
 *   context, what every leaf service and every bench runs;
 * - `provider refers`: the provider app also refers a service, so its methods run in the async call
 *   context (AsyncLocalStorage per call) — what a middle service pays on calls that make no nested call;
 * - `nested`: each call's method makes one in-process-free nested call to a third app, inheriting
 *   deadline, cancellation, trace and so on (two calls per measured call; reported per outer call).
 *
 *   npx tsx bench/hop-cost.ts [calls per round = 40000] [rounds = 5]
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AppOptions } from '../src/index.js';
import { callisto } from '../src/index.js';
import { benchService } from './lib/scenarios.js';
import { BenchServiceDef } from './systems/callisto/service.js';

const calls = Number(process.argv[2] ?? 40_000);
const rounds = Number(process.argv[3] ?? 5);
const inFlight = 256;
const QUIET: AppOptions = { logLevel: 'warn', load: { configFile: false, env: false } };
const VARIANTS = ['plain', 'provider refers', 'nested'] as const;
type Variant = (typeof VARIANTS)[number];

async function measure(variant: Variant): Promise<number> {
  const leaf = await callisto(QUIET);
  leaf.provide(BenchServiceDef, benchService);
  await leaf.start();
  const server = await callisto(QUIET);
  const below =
    variant === 'plain'
      ? undefined
      : server.refer(BenchServiceDef, { url: `127.0.0.1:${leaf.port}`, injvm: false, timeoutMs: 30_000 });
  server.provide(
    BenchServiceDef,
    variant === 'nested' ? { ...benchService, getUser: (id: number) => below!.getUser(id) } : benchService,
  );
  await server.start();
  const client = await callisto(QUIET);
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
  await run(calls);
  const used = process.cpuUsage(cpu);
  await client.close();
  await server.close();
  await leaf.close();
  return (used.user + used.system) / calls;
}

const child = process.env.HOP_COST_VARIANT as Variant | undefined;
if (child !== undefined) {
  console.log(JSON.stringify({ cpuUsPerCall: await measure(child) }));
  process.exit(0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const results = new Map<Variant, number[]>(VARIANTS.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  for (const variant of VARIANTS) {
    const out = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), String(calls)],
      { env: { ...process.env, HOP_COST_VARIANT: variant }, encoding: 'utf8', timeout: 300_000 },
    );
    const line = out.stdout.trim().split('\n').pop() ?? '';
    results.get(variant)!.push((JSON.parse(line) as { cpuUsPerCall: number }).cpuUsPerCall);
  }
}
console.log(
  `CPU per call, three apps in one process, ${calls} calls x ${rounds} rounds, ${inFlight} in flight`,
);
const base = median(results.get('plain')!);
for (const [variant, values] of results) {
  const m = median(values);
  console.log(
    `${variant.padEnd(18)} ${m.toFixed(2).padStart(6)} µs/call  ${(((m - base) / base) * 100).toFixed(1).padStart(6)}%  (rounds: ${values.map((v) => v.toFixed(2)).join(' ')})`,
  );
}
