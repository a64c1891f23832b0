/**
 * Discovery at scale, per engine (`npm run test:scale`; not part of `npm test`). For each engine and
 * each size N (default 1,000 registrations across 20 services, 50 consumer apps):
 *
 *   1. the registry server runs on a namespaced host; a farm app serves every service; registrar
 *      processes register N / 10 provider apps of 10 services each (one registry client per provider
 *      app), at distinct 127.77.x.y addresses that all reach the farm;
 *   2. the consumer apps start (one process each), refer to every service and call each once:
 *      the time until every app holds every list complete is the first discovery;
 *   3. 10 s idle: the steady cost (keepalives, heartbeats, polls, resyncs) of consumers and registry;
 *   4. 10 providers are added and removed one at a time (each one new registry client): the time from
 *      the registration (or removal) call to every consumer app having applied it;
 *   5. every consumer app is closed and started again at once (the thundering herd): the time until
 *      every app holds every list again.
 *
 * Measured: latencies (p50/p99/max), the consumers' CPU per update and per idle second, their memory,
 * the registry server's CPU and memory. Results are printed and written to .tmp/scale/results.json.
 * Knobs: SCALE_ENGINES (file,etcd,zookeeper,redis), SCALE_SIZES (1000), SCALE_APPS (50),
 * SCALE_SERVICES (20), SCALE_EVENTS (10), SCALE_TTL_MS (10000), SCALE_CONSUMER_PROCESSES (= apps).
 *
 * Pass/fail: at up to 1,000 registrations, 50 apps and 20 services each run must stay within its
 * engine's bounds (support/scale-bounds.ts: update propagation p99, consumer CPU per update and idle,
 * heap per app, registry idle CPU, first discovery and herd), several times what a 2-core shared machine
 * measured; SCALE_BOUND_FACTOR (default 1) multiplies them for slower machines, and the time bounds
 * also scale with the contention measured before each run (a spin's wall time over its CPU time).
 * Larger runs are measured and printed only.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type Agent, killAgents, startAgent } from '../multihost/support/agents.js';
import { createNetwork, type HostNetwork } from '../multihost/support/netns.js';
import { providerHost, serviceName } from './fixtures/scale-services.js';
import { cpuMs, rssBytes } from './support/proc-stats.js';
import { type ScaleEngine, type ScaleRegistry, startScaleRegistry } from './support/registry-server.js';
import {
  boundFactor,
  boundViolations,
  formatBounds,
  isBounded,
  measureContention,
} from './support/scale-bounds.js';
import { formatResult, percentile, type ScaleResult } from './support/scale-report.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/scale-agent.ts');
const env = process.env;
const list = (value: string | undefined, fallback: string) =>
  (value || fallback).split(',').map((v) => v.trim());
const ENGINES = list(env['SCALE_ENGINES'], 'file,etcd,zookeeper,redis') as ScaleEngine[];
const SIZES = list(env['SCALE_SIZES'], '1000').map(Number);
const APPS = Number(env['SCALE_APPS'] || 50);
const SERVICES = Number(env['SCALE_SERVICES'] || 20);
const EVENTS = Number(env['SCALE_EVENTS'] || 10);
const TTL_MS = Number(env['SCALE_TTL_MS'] || 10_000);
/**
 * One consumer app per process by default, as deployed (apps of one process each announce their own
 * consumer entry, `consumers/<host>:<pid>:<n>`).
 */
const CONSUMER_PROCESSES = Number(env['SCALE_CONSUMER_PROCESSES'] || APPS);
const REGISTRAR_PROCESSES = 2;
const SERVICES_PER_PROVIDER = Math.min(10, SERVICES);
const IDLE_MS = 10_000;
const RESULTS = path.resolve('.tmp/scale/results.json');
const BOUND_FACTOR = boundFactor(env['SCALE_BOUND_FACTOR']);

let network: HostNetwork | undefined;
let registry: ScaleRegistry | undefined;
let scratch: string | undefined;

afterEach(async () => {
  await killAgents();
  await registry?.close();
  await network?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  registry = undefined;
  network = undefined;
  scratch = undefined;
});

interface Stats {
  cpuMs: number;
  rss: number;
  heapUsed: number;
  warnings: number;
  warningSamples: string[];
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

async function statsOf(agents: readonly Agent[]): Promise<Stats[]> {
  return Promise.all(agents.map((agent) => agent.request<Stats>('stats')));
}

async function scaleRun(engine: ScaleEngine, size: number): Promise<ScaleResult> {
  network = await createNetwork();
  const host = await network.addHost('scale');
  scratch = mkdtempSync(path.join(tmpdir(), 'callisto-scale-'));
  registry = await startScaleRegistry(engine, host);
  const regPid = registry.pid();
  const regCpu = () => cpuMs(regPid) ?? 0;

  // processes first, a few at a time (dozens of runtimes starting at once would swamp 2 cores), and
  // only then anything measured
  const names = [
    'farm',
    ...Array.from({ length: REGISTRAR_PROCESSES }, (_, i) => `registrar-${i}`),
    ...Array.from({ length: CONSUMER_PROCESSES }, (_, i) => `consumers-${i}`),
  ];
  const started: Agent[] = [];
  for (let i = 0; i < names.length; i += 4) {
    started.push(...(await Promise.all(names.slice(i, i + 4).map((name) => startAgent(host, name, AGENT)))));
  }
  const [farm, ...others] = started;
  const registrars = others.slice(0, REGISTRAR_PROCESSES);
  const consumerProcs = others.slice(REGISTRAR_PROCESSES);
  const { port } = await farm!.request<{ port: number }>('farm', { services: SERVICES });

  // 1. registrations: N / 10 provider apps of 10 services each (two halves of the services alternate)
  const providerCount = Math.ceil(size / SERVICES_PER_PROVIDER);
  const providers = Array.from({ length: providerCount }, (_, id) => ({
    id,
    host: providerHost(id),
    port,
    services: Array.from(
      { length: SERVICES_PER_PROVIDER },
      (_, j) => ((id % 2) * SERVICES_PER_PROVIDER + j) % SERVICES,
    ),
  }));
  const counts: Record<string, number> = {};
  for (const provider of providers) {
    for (const service of provider.services)
      counts[serviceName(service)] = (counts[serviceName(service)] ?? 0) + 1;
  }
  const registrations = sum(Object.values(counts));
  const common = { registry: registry.url, ttlMs: TTL_MS };
  let regCpuBefore = regCpu();
  const registerStarted = Date.now();
  await Promise.all(
    registrars.map((registrar, i) =>
      registrar.request('register', {
        ...common,
        providers: providers.filter((p) => p.id % REGISTRAR_PROCESSES === i),
      }),
    ),
  );
  const registerMs = Date.now() - registerStarted;
  const registerRegistryCpuMs = regCpu() - regCpuBefore;

  // 2. consumers: first discovery
  const appsPerProcess = Math.ceil(APPS / CONSUMER_PROCESSES);
  const baseline = await statsOf(consumerProcs);
  regCpuBefore = regCpu();
  const discoveryStarted = Date.now();
  await Promise.all(
    consumerProcs.map((proc, i) =>
      proc.request('consumers', {
        ...common,
        services: SERVICES,
        snapshotRoot: path.join(scratch!, `snapshots-${i}`),
        names: Array.from({ length: appsPerProcess }, (_, j) => `consumer-${i}-${j}`),
        counts,
      }),
    ),
  );
  const discovered = await Promise.all(
    consumerProcs.map((proc) =>
      proc.request<{ complete: boolean; lastAt: number; missing: unknown[] }>('complete', {
        counts,
        timeoutMs: 180_000,
      }),
    ),
  );
  expect(discovered.filter((d) => !d.complete).map((d) => d.missing)).toEqual([]);
  const discoveryMs = Math.max(...discovered.map((d) => d.lastAt)) - discoveryStarted;
  const discoveryRegistryCpuMs = regCpu() - regCpuBefore;

  // 3. idle
  const idleStart = await statsOf(consumerProcs);
  const regIdleBefore = regCpu();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idleEnd = await statsOf(consumerProcs);
  const idleRegistryCpuMs = regCpu() - regIdleBefore;
  const idleConsumerCpuMs = sum(idleEnd.map((s) => s.cpuMs)) - sum(idleStart.map((s) => s.cpuMs));

  // 4. one provider at a time: added, then removed
  const eventLatencies: number[] = [];
  const perAppLatencies: number[] = [];
  const kinds: string[] = [];
  const eventsStart = await statsOf(consumerProcs);
  const regEventsBefore = regCpu();
  const eventsStarted = Date.now();
  const extra = Array.from({ length: EVENTS }, (_, i) => ({
    id: 100_000 + i,
    host: providerHost(50_000 + i),
    port,
    services: [(i * 7) % SERVICES],
  }));
  for (const [phase, present] of [
    ['add', true],
    ['remove', false],
  ] as const) {
    for (const provider of extra) {
      const service = serviceName(provider.services[0]!);
      const address = `${provider.host}:${provider.port}`;
      await Promise.all(consumerProcs.map((proc) => proc.request('arm', { service, address, present })));
      const registrar = registrars[provider.id % REGISTRAR_PROCESSES]!;
      const { at } =
        phase === 'add'
          ? await registrar.request<{ at: number }>('add', { ...common, provider })
          : await registrar.request<{ at: number }>('remove', { id: provider.id });
      const collected = await Promise.all(
        consumerProcs.map((proc) =>
          proc.request<{ applied: Record<string, number>; of: number }>('collect', { timeoutMs: 60_000 }),
        ),
      );
      const applied = collected.flatMap((c) => Object.values(c.applied));
      expect(applied.length).toBe(sum(collected.map((c) => c.of)));
      const latencies = applied.map((t) => t - at);
      perAppLatencies.push(...latencies);
      eventLatencies.push(Math.max(...latencies));
      kinds.push(phase);
    }
  }
  const eventsMs = Date.now() - eventsStarted;
  const eventsEnd = await statsOf(consumerProcs);
  const eventsRegistryCpuMs = regCpu() - regEventsBefore;
  const eventsConsumerCpuMs = sum(eventsEnd.map((s) => s.cpuMs)) - sum(eventsStart.map((s) => s.cpuMs));
  const idleRate = idleConsumerCpuMs / IDLE_MS;
  const updates = EVENTS * 2;
  const apps = appsPerProcess * CONSUMER_PROCESSES;
  const cpuPerUpdatePerAppMs = Math.max(0, eventsConsumerCpuMs - idleRate * eventsMs) / (updates * apps);

  const steady = await statsOf(consumerProcs);
  const registryRss = rssBytes(regPid);

  // 5. the thundering herd: every consumer app restarted at once
  const regHerdBefore = regCpu();
  const herdStarted = Date.now();
  await Promise.all(consumerProcs.map((proc) => proc.request('restart')));
  const herd = await Promise.all(
    consumerProcs.map((proc) =>
      proc.request<{ complete: boolean; lastAt: number; missing: unknown[] }>('complete', {
        counts,
        timeoutMs: 180_000,
      }),
    ),
  );
  expect(herd.filter((h) => !h.complete).map((h) => h.missing)).toEqual([]);
  const herdMs = Math.max(...herd.map((h) => h.lastAt)) - herdStarted;
  const herdRegistryCpuMs = regCpu() - regHerdBefore;
  const after = await statsOf(consumerProcs);

  return {
    engine,
    registrations,
    providers: providerCount,
    services: SERVICES,
    apps,
    appsPerProcess,
    ttlMs: TTL_MS,
    registerMs,
    registerRegistryCpuMs,
    discoveryMs,
    discoveryRegistryCpuMs,
    update: {
      events: eventLatencies.length,
      allAppliedMs: {
        p50: percentile(eventLatencies, 50),
        p99: percentile(eventLatencies, 99),
        max: Math.max(...eventLatencies),
      },
      perAppMs: {
        p50: percentile(perAppLatencies, 50),
        p99: percentile(perAppLatencies, 99),
        max: Math.max(...perAppLatencies),
      },
      addMaxMs: Math.max(...eventLatencies.filter((_, i) => kinds[i] === 'add')),
      removeMaxMs: Math.max(...eventLatencies.filter((_, i) => kinds[i] === 'remove')),
    },
    consumer: {
      cpuPerUpdatePerAppMs,
      idleCpuPerAppPerSecondMs: (idleRate * 1000) / apps,
      heapPerAppBytes: (sum(steady.map((s) => s.heapUsed)) - sum(baseline.map((s) => s.heapUsed))) / apps,
      rssPerProcessBytes: Math.max(...steady.map((s) => s.rss)),
      warnings: sum(after.map((s) => s.warnings)),
      warningSamples: after.flatMap((s) => s.warningSamples).slice(0, 3),
    },
    registry: {
      idleCpuPerSecondMs: regPid === undefined ? undefined : idleRegistryCpuMs / (IDLE_MS / 1000),
      eventsCpuMs: regPid === undefined ? undefined : eventsRegistryCpuMs,
      rssBytes: registryRss,
      herdCpuMs: regPid === undefined ? undefined : herdRegistryCpuMs,
    },
    herdMs,
  };
}

describe('scale: discovery with many providers and consumers', () => {
  for (const engine of ENGINES) {
    for (const size of SIZES) {
      it(`${engine}: ${size} registrations, ${APPS} consumer apps`, async () => {
        // how busy the machine is before this run adds its own load (the time bounds scale with it)
        const contention = measureContention();
        const result = await scaleRun(engine, size);
        console.log(formatResult(result));
        console.log(formatBounds(result, BOUND_FACTOR, contention));
        mkdirSync(path.dirname(RESULTS), { recursive: true });
        appendFileSync(RESULTS, `${JSON.stringify({ at: new Date().toISOString(), ...result })}\n`);
        if (isBounded(result)) expect(boundViolations(result, BOUND_FACTOR, contention)).toEqual([]);
      }, 900_000);
    }
  }
});
