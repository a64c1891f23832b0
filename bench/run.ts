/**
 * The benchmark harness (`npm run bench`): for every scenario (S1, S2, S3; the stream scenarios S6, S7,
 * S8, which systems without streams skip) and every system (baseline
 * first, then callisto, then any other system under bench/systems/), it starts the system's server and
 * client as separate processes on loopback (pinned to CPU 0 and CPU 1 when possible), collects the
 * client's figures and the server's peak RSS, prints one table per scenario with each system against
 * the baseline and Callisto's targets, and writes everything to bench/results/latest.json.
 *
 * Environment: BENCH_SCALE (call-count multiplier, default 1), BENCH_SYSTEMS (comma-separated systems,
 * default all), BENCH_SCENARIOS (comma-separated scenarios, default all), BENCH_RUNS (runs per system and scenario, the median is reported; default 1), BENCH_PIN=0 (no CPU pinning), BENCH_STRICT=1 (exit 1 when a system fails or Callisto
 * misses a target), BENCH_OUTPUT (results path, default bench/results/latest.json).
 */
import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytesScenario, formatManyClientsScenario } from './lib/load-report.js';
import { runManyClientsScenario } from './lib/many-clients.js';
import { choosePinning, runClientOutcome, startServer } from './lib/processes.js';
import {
  BASELINE,
  CALLISTO,
  compare,
  describeTarget,
  formatScenario,
  type ScenarioReport,
  type SystemOutcome,
  writeJson,
} from './lib/report.js';
import { SCENARIOS, type Scenario, warmupCallsFor } from './lib/scenarios.js';
import { formatStreamScenario } from './lib/stream-report.js';

const benchDir = fileURLToPath(new URL('.', import.meta.url));
const systemsDir = join(benchDir, 'systems');

interface BenchOptions {
  scale: number;
  runs: number;
  systems: string[];
  pin: boolean;
  strict: boolean;
  output: string;
  scenarios: readonly Scenario[];
}

function resolveBenchOptions(env: NodeJS.ProcessEnv): BenchOptions {
  const scale = env.BENCH_SCALE === undefined || env.BENCH_SCALE === '' ? 1 : Number(env.BENCH_SCALE);
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new Error(`BENCH_SCALE must be a positive number, got "${env.BENCH_SCALE}"`);
  }
  const runs = env.BENCH_RUNS === undefined || env.BENCH_RUNS === '' ? 1 : Number(env.BENCH_RUNS);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`BENCH_RUNS must be a positive integer, got "${env.BENCH_RUNS}"`);
  }
  const discovered = existsSync(systemsDir)
    ? readdirSync(systemsDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort()
    : [];
  const listed = env.BENCH_SYSTEMS?.trim()
    ? env.BENCH_SYSTEMS.split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '')
    : [BASELINE, CALLISTO, ...discovered];
  // baseline first, then callisto, then the others in the order given; no duplicates
  const unique = [...new Set(listed)];
  const systems = [
    ...unique.filter((name) => name === BASELINE),
    ...unique.filter((name) => name === CALLISTO),
    ...unique.filter((name) => name !== BASELINE && name !== CALLISTO),
  ];
  return {
    scale,
    runs,
    systems,
    pin: env.BENCH_PIN !== '0',
    strict: env.BENCH_STRICT === '1',
    output: resolve(env.BENCH_OUTPUT ?? join(benchDir, 'results', 'latest.json')),
    scenarios: selectScenarios(env.BENCH_SCENARIOS),
  };
}

/**
 * BENCH_SCENARIOS (`S2,S3`; `S4` is both S4-64K and S4-1M): the scenarios to run, in their own order;
 * every one when unset.
 */
function selectScenarios(list: string | undefined): readonly Scenario[] {
  if (list === undefined || list.trim() === '') return SCENARIOS;
  const names = list.split(',').map((name) => name.trim().toUpperCase());
  const named = (scenario: Scenario, name: string): boolean =>
    scenario.name === name || scenario.name.startsWith(`${name}-`);
  for (const name of names) {
    if (!SCENARIOS.some((scenario) => named(scenario, name))) {
      throw new Error(
        `BENCH_SCENARIOS names "${name}", not a scenario (${SCENARIOS.map((s) => s.name).join(', ')})`,
      );
    }
  }
  return SCENARIOS.filter((scenario) => names.some((name) => named(scenario, name)));
}

/** The table of one scenario, by its kind. */
function formatReport(report: ScenarioReport, scenario: Scenario): string {
  switch (scenario.kind) {
    case 'unary':
      return formatScenario(report, scenario);
    case 'bytes':
      return formatBytesScenario(report, scenario);
    case 'many-clients':
      return formatManyClientsScenario(report, scenario);
    default:
      return formatStreamScenario(report, scenario);
  }
}

interface SystemScripts {
  server: string;
  client: string;
}

function findScripts(system: string): SystemScripts | string {
  const server = join(systemsDir, system, 'server.ts');
  const client = join(systemsDir, system, 'client.ts');
  const missing = [server, client].filter((path) => !existsSync(path));
  if (missing.length > 0) {
    return `missing ${missing.map((path) => path.slice(benchDir.length)).join(' and ')}`;
  }
  return { server, client };
}

async function runOne(
  scripts: SystemScripts,
  scenarioName: string,
  calls: number,
  concurrency: number,
  pinning: ReturnType<typeof choosePinning>,
): Promise<SystemOutcome> {
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    server = await startServer(scripts.server, pinning, 30_000);
    const clientTimeoutMs = 60_000 + calls * 0.5;
    const running = server;
    let cpuAtStart: number | undefined;
    const result = await runClientOutcome(
      scripts.client,
      [scenarioName, String(server.port), String(calls), String(concurrency)],
      pinning,
      clientTimeoutMs,
      () => {
        cpuAtStart = running.cpuMs();
      },
    );
    const cpuAtEnd = server.cpuMs();
    const rss = await server.stop();
    server = undefined;
    if ('unsupported' in result) return { ok: false, unsupported: true, error: result.unsupported };
    const serverCpuUsPerCall =
      cpuAtStart === undefined || cpuAtEnd === undefined ? null : ((cpuAtEnd - cpuAtStart) * 1000) / calls;
    return { ok: true, ...result, serverPeakRssBytes: rss ?? null, serverCpuUsPerCall };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, error: server === undefined ? message : `${message}\n${server.diagnostics()}` };
  } finally {
    await server?.stop();
  }
}

/**
 * The median of a system's runs, by the scenario's own metric (p50 for latency, p99 beside a stream for
 * S8, calls/s or messages/s for throughput),
 * with every run's figure attached; failed runs are left out unless all failed.
 */
function pickMedian(outcomes: SystemOutcome[], scenario: Scenario): SystemOutcome {
  const ok = outcomes.filter((o): o is Extract<SystemOutcome, { ok: true }> => o.ok);
  if (ok.length === 0) return outcomes.find((o) => !o.ok && o.unsupported !== true) ?? outcomes[0]!;
  const key = (o: (typeof ok)[number]): number =>
    scenario.target.kind === 'p50'
      ? -o.p50Ms
      : scenario.target.kind === 'p99-beside-stream'
        ? -o.p99Ms
        : o.callsPerSec;
  const sorted = [...ok].sort((a, b) => key(a) - key(b));
  const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
  if (outcomes.length === 1) return median;
  return {
    ...median,
    runs: outcomes.map((o) =>
      o.ok ? { callsPerSec: o.callsPerSec, p50Ms: o.p50Ms, p99Ms: o.p99Ms } : { error: o.error },
    ),
  };
}

async function main(): Promise<number> {
  const options = resolveBenchOptions(process.env);
  const pinning = choosePinning(!options.pin);
  const startedAt = new Date().toISOString();

  const runnable: Array<[string, SystemScripts]> = [];
  const skipped: Array<{ system: string; reason: string }> = [];
  for (const system of options.systems) {
    const scripts = findScripts(system);
    if (typeof scripts === 'string') skipped.push({ system, reason: scripts });
    else runnable.push([system, scripts]);
  }

  console.log(
    `Callisto benchmark: node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ` +
      `scale ${options.scale}, ${options.runs} run(s) each, ${pinning.note === undefined ? 'server on CPU 0, client on CPU 1' : `no pinning (${pinning.note})`}`,
  );
  console.log(`systems: ${runnable.map(([name]) => name).join(', ') || 'none'}`);
  for (const { system, reason } of skipped) console.log(`skipping ${system}: ${reason}`);
  if (!runnable.some(([name]) => name === BASELINE)) {
    console.log('note: no baseline in this run, so no ratios');
  }

  const reports: ScenarioReport[] = [];
  let failures = 0;
  let misses = 0;
  for (const scenario of options.scenarios) {
    const calls = Math.max(1, Math.round(scenario.calls * options.scale));
    const runs: Record<string, SystemOutcome[]> = {};
    for (let run = 0; run < options.runs; run++) {
      // systems interleaved run by run, so that drift in machine load hits them alike
      for (const [system, scripts] of runnable) {
        const outcome =
          scenario.kind === 'many-clients'
            ? await runManyClientsScenario({
                ...scripts,
                scenario,
                warmupCalls: warmupCallsFor(calls, options.scale),
                durationMs: Math.max(500, Math.round((scenario.durationMs ?? 5000) * options.scale)),
                pinning,
              })
            : await runOne(scripts, scenario.name, calls, scenario.concurrency, pinning);
        const previous = runs[system] ?? [];
        runs[system] = [...previous, outcome];
      }
    }
    const results: Record<string, SystemOutcome> = {};
    for (const [system, outcomes] of Object.entries(runs)) {
      const picked = pickMedian(outcomes, scenario);
      results[system] = picked;
      if (!picked.ok && picked.unsupported !== true) failures++;
    }
    const versusBaseline = compare(scenario, results);
    if (versusBaseline[CALLISTO]?.targetMet === false) misses++;
    const report: ScenarioReport = {
      scenario: scenario.name,
      description: scenario.description,
      method: scenario.method,
      calls,
      concurrency: scenario.concurrency,
      warmupCalls: warmupCallsFor(calls, options.scale),
      target: describeTarget(scenario),
      results,
      versusBaseline,
    };
    reports.push(report);
    console.log(`\n${formatReport(report, scenario)}`);
  }

  writeJson(options.output, {
    startedAt,
    finishedAt: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? null,
    pinned: pinning.note === undefined,
    pinningNote: pinning.note ?? null,
    scale: options.scale,
    runs: options.runs,
    systems: runnable.map(([name]) => name),
    skipped,
    scenarios: reports,
  });
  console.log(`\nresults written to ${options.output}`);
  if (failures > 0) console.log(`${failures} system run(s) failed`);
  return options.strict && (failures > 0 || misses > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
