/**
 * The pass/fail bounds of the scale suite: per engine, for the stated configuration (at most 1,000
 * registrations and 50 consumer apps, the defaults) on a 2-core machine shared with other work. Each is
 * several times the figure measured on such a machine (docs/scaling.md), so a run fails when something
 * got clearly worse, not when the machine is busy. `SCALE_BOUND_FACTOR` (default 1) multiplies every
 * bound, for slower machines; larger configurations are measured and printed, not judged.
 *
 * The time bounds (update propagation, first discovery, herd) also scale with the contention measured
 * just before the run (`measureContention`: wall time over CPU time of a short spin, 1 on a machine with
 * a core to spare, 10 when other work leaves this process a tenth of a core): a latency measured while
 * the machine is oversubscribed says how busy the machine was, not how fast discovery is. The CPU and
 * memory bounds do not scale with it (the CPU time a step spends is what contention leaves unchanged).
 * Past `MAX_JUDGED_CONTENTION` the machine is too busy to judge anything but memory: sessions time out
 * and reconnect, so even "idle" CPU is work the load caused (a run at load 70 on 2 cores measured a
 * contention of ~48, ZooKeeper idle CPU 16 ms/s per app against 0.9 on a machine with room).
 */
import type { ScaleResult } from './scale-report.js';

export interface ScaleBounds {
  /** One registration or removal until every consumer app applied it, p99 over the events, ms. */
  updateP99Ms: number;
  /** Consumer CPU per update per app, ms. */
  cpuPerUpdatePerAppMs: number;
  /** Consumer CPU per app per idle second, ms. */
  idleCpuPerAppPerSecondMs: number;
  /** Consumer heap per app with every list held, bytes. */
  heapPerAppBytes: number;
  /** Registry server CPU per idle second, ms (engines with a server). */
  registryIdleCpuPerSecondMs: number;
  /** First discovery, and every app restarted at once, until every app holds every list, ms. */
  discoveryMs: number;
}

const MB = 1024 * 1024;

/** The configuration the bounds are stated for (a run may be lighter, never heavier). */
export const BOUNDED_CONFIGURATION = { maxRegistrations: 1_000, maxApps: 50, maxServices: 20 } as const;

/** Measured in brackets (docs/scaling.md, 1,000 registrations, 50 apps, 2 cores under other load). */
export const SCALE_BOUNDS: Readonly<Record<string, ScaleBounds>> = {
  // file [update p99 747 ms, 13 ms CPU/update/app, 9.1 ms/s idle, 12 MB, discovery 8.5 s / herd 5.6 s]
  file: {
    updateP99Ms: 5_000,
    cpuPerUpdatePerAppMs: 60,
    idleCpuPerAppPerSecondMs: 40,
    heapPerAppBytes: 64 * MB,
    registryIdleCpuPerSecondMs: Number.POSITIVE_INFINITY,
    discoveryMs: 90_000,
  },
  // etcd [105 ms, 3.2 ms, 2.1 ms/s, 19 MB, server 21 ms/s, 11.5 s / 7.1 s]
  etcd: {
    updateP99Ms: 1_500,
    cpuPerUpdatePerAppMs: 20,
    idleCpuPerAppPerSecondMs: 15,
    heapPerAppBytes: 64 * MB,
    registryIdleCpuPerSecondMs: 250,
    discoveryMs: 90_000,
  },
  // zookeeper [106 ms, 3.1 ms, 0.9 ms/s, 15 MB, server 31 ms/s, 11.2 s / 9.9 s]
  zookeeper: {
    updateP99Ms: 1_500,
    cpuPerUpdatePerAppMs: 20,
    idleCpuPerAppPerSecondMs: 10,
    heapPerAppBytes: 64 * MB,
    registryIdleCpuPerSecondMs: 250,
    discoveryMs: 90_000,
  },
  // redis [182 ms, 2.3 ms, 8.1 ms/s, 16 MB, server 42 ms/s, 6.6 s / 3.5 s]
  redis: {
    updateP99Ms: 2_000,
    cpuPerUpdatePerAppMs: 20,
    idleCpuPerAppPerSecondMs: 30,
    heapPerAppBytes: 64 * MB,
    registryIdleCpuPerSecondMs: 300,
    discoveryMs: 90_000,
  },
};

/** Contention past which only the memory bound is judged. */
export const MAX_JUDGED_CONTENTION = 8;

/** `SCALE_BOUND_FACTOR`, validated: a number > 0. */
export function boundFactor(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  const factor = Number(value);
  if (!(factor > 0))
    throw new Error(`SCALE_BOUND_FACTOR=${value}: expected a number > 0, e.g. 2 on a slow machine`);
  return factor;
}

/**
 * Wall time over CPU time of a spin of `spinMs` CPU-ms in this process, at least 1: how many times longer
 * than on an idle machine a CPU-bound step takes now.
 */
export function measureContention(spinMs = 300): number {
  const startWall = performance.now();
  const startCpu = process.cpuUsage();
  let cpuMs = 0;
  let x = 0;
  while (cpuMs < spinMs && performance.now() - startWall < spinMs * 50) {
    for (let i = 0; i < 100_000; i++) x = (x * 31 + i) % 1_000_003;
    const used = process.cpuUsage(startCpu);
    cpuMs = (used.user + used.system) / 1000;
  }
  const wallMs = performance.now() - startWall;
  return x >= 0 && cpuMs > 0 ? Math.max(1, wallMs / cpuMs) : 1;
}

/** Whether the bounds apply to a run of this size. */
export function isBounded(result: Pick<ScaleResult, 'registrations' | 'apps' | 'services'>): boolean {
  return (
    result.registrations <= BOUNDED_CONFIGURATION.maxRegistrations &&
    result.apps <= BOUNDED_CONFIGURATION.maxApps &&
    result.services <= BOUNDED_CONFIGURATION.maxServices
  );
}

/** The figures of `result` over their bound (times `factor`), one line each; empty when all hold. */
export function boundViolations(result: ScaleResult, factor: number, contention = 1): string[] {
  const bounds = SCALE_BOUNDS[result.engine];
  if (bounds === undefined) return [`no bounds stated for engine ${result.engine}`];
  const timeFactor = factor * Math.max(1, contention);
  const checks: Array<[string, number | undefined, number]> = [
    ['update p99 (every app applied)', result.update.allAppliedMs.p99, bounds.updateP99Ms * timeFactor],
    [
      'consumer CPU per update per app',
      result.consumer.cpuPerUpdatePerAppMs,
      bounds.cpuPerUpdatePerAppMs * factor,
    ],
    [
      'consumer idle CPU per app per s',
      result.consumer.idleCpuPerAppPerSecondMs,
      bounds.idleCpuPerAppPerSecondMs * factor,
    ],
    ['consumer heap per app (bytes)', result.consumer.heapPerAppBytes, bounds.heapPerAppBytes * factor],
    [
      'registry idle CPU per s',
      result.registry.idleCpuPerSecondMs,
      bounds.registryIdleCpuPerSecondMs * factor,
    ],
    ['first discovery', result.discoveryMs, bounds.discoveryMs * timeFactor],
    ['herd (every app restarted at once)', result.herdMs, bounds.discoveryMs * timeFactor],
  ];
  const round = (value: number) => Math.round(value * 100) / 100;
  const judged =
    contention > MAX_JUDGED_CONTENTION ? checks.filter(([name]) => name.includes('heap')) : checks;
  return judged.flatMap(([name, measured, bound]) =>
    measured !== undefined && !(measured <= bound)
      ? [`${result.engine}: ${name} ${round(measured)} over its bound ${round(bound)}`]
      : [],
  );
}

/** One line saying what was judged against what. */
export function formatBounds(result: ScaleResult, factor: number, contention = 1): string {
  if (!isBounded(result)) {
    return `[scale] ${result.engine}: no bounds for ${result.registrations} registrations / ${result.apps} apps / ${result.services} services (stated for at most ${BOUNDED_CONFIGURATION.maxRegistrations} / ${BOUNDED_CONFIGURATION.maxApps} / ${BOUNDED_CONFIGURATION.maxServices}): measured only`;
  }
  const b = SCALE_BOUNDS[result.engine];
  if (b === undefined) return `[scale] ${result.engine}: no bounds stated`;
  const timeFactor = factor * Math.max(1, contention);
  if (contention > MAX_JUDGED_CONTENTION) {
    return `[scale] ${result.engine}: contention ${contention.toFixed(1)} > ${MAX_JUDGED_CONTENTION} (the machine is oversubscribed): only heap <= ${(b.heapPerAppBytes * factor) / MB} MB per app judged`;
  }
  return `[scale] ${result.engine} bounds (x${factor}; time bounds also x${contention.toFixed(2)} contention): update p99 <= ${Math.round(b.updateP99Ms * timeFactor)} ms, CPU/update/app <= ${b.cpuPerUpdatePerAppMs * factor} ms, idle <= ${b.idleCpuPerAppPerSecondMs * factor} ms/s per app, heap <= ${(b.heapPerAppBytes * factor) / MB} MB per app, discovery and herd <= ${Math.round(b.discoveryMs * timeFactor)} ms`;
}
