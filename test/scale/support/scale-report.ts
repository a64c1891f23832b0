/** What one scale run measured, and how it is printed. */

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface ScaleResult {
  engine: string;
  registrations: number;
  providers: number;
  services: number;
  apps: number;
  appsPerProcess: number;
  ttlMs: number;
  /** Registering every provider (N / 10 registry clients). */
  registerMs: number;
  registerRegistryCpuMs: number;
  /** Consumer apps started until every one holds every list complete. */
  discoveryMs: number;
  discoveryRegistryCpuMs: number;
  update: {
    events: number;
    /** Per registration or removal: until the last consumer app applied it. */
    allAppliedMs: Spread;
    /** Every (event, app) pair. */
    perAppMs: Spread;
    addMaxMs: number;
    removeMaxMs: number;
  };
  consumer: {
    cpuPerUpdatePerAppMs: number;
    idleCpuPerAppPerSecondMs: number;
    heapPerAppBytes: number;
    rssPerProcessBytes: number;
    warnings: number;
    warningSamples: string[];
  };
  registry: {
    idleCpuPerSecondMs: number | undefined;
    eventsCpuMs: number | undefined;
    rssBytes: number | undefined;
    herdCpuMs: number | undefined;
  };
  /** Every consumer app restarted at once, until every one holds every list again. */
  herdMs: number;
}

/** The `p`th percentile (nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const mb = (bytes: number | undefined) =>
  bytes === undefined ? 'n/a' : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (value: number | undefined, digits = 0) =>
  value === undefined ? 'n/a' : `${value.toFixed(digits)} ms`;
const spread = (s: Spread) => `${s.p50}/${s.p99}/${s.max} ms`;

export function formatResult(r: ScaleResult): string {
  return [
    `[scale] ${r.engine}: ${r.registrations} registrations (${r.providers} provider apps x 10 services, ${r.services} services), ${r.apps} consumer apps, ttl ${r.ttlMs} ms`,
    `  register all: ${r.registerMs} ms (registry CPU ${ms(r.registerRegistryCpuMs)}); first discovery of all lists by all apps: ${r.discoveryMs} ms (registry CPU ${ms(r.discoveryRegistryCpuMs)})`,
    `  one registration/removal -> every app applied it (${r.update.events} events): p50/p99/max ${spread(r.update.allAppliedMs)}; per app ${spread(r.update.perAppMs)}; add max ${r.update.addMaxMs} ms, remove max ${r.update.removeMaxMs} ms`,
    `  consumer: CPU ${r.consumer.cpuPerUpdatePerAppMs.toFixed(2)} ms per update per app, idle ${r.consumer.idleCpuPerAppPerSecondMs.toFixed(2)} ms CPU per app per s, heap ${mb(r.consumer.heapPerAppBytes)} per app, RSS ${mb(r.consumer.rssPerProcessBytes)} per process of ${r.appsPerProcess} app(s), ${r.consumer.warnings} warnings${r.consumer.warningSamples.length ? ` (${r.consumer.warningSamples.join(' | ')})` : ''}`,
    `  registry server: idle ${ms(r.registry.idleCpuPerSecondMs, 1)} CPU per s, ${ms(r.registry.eventsCpuMs)} CPU over the updates, RSS ${mb(r.registry.rssBytes)}; herd: ${r.herdMs} ms to every list again (registry CPU ${ms(r.registry.herdCpuMs)})`,
  ].join('\n');
}
