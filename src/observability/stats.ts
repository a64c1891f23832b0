/**
 * The admin `/stats` feed (the dashboard reads it): per method and side, cumulative since the app
 * started — calls, failures, by code, in flight, latency percentiles (from the latency histogram,
 * interpolated inside buckets, cumulative since start), and the last failure.
 */
import type { MetricsStore } from './metrics-store.js';

export interface MethodStats {
  side: 'provider' | 'consumer';
  service: string;
  version: string;
  group: string;
  method: string;
  calls: number;
  failures: number;
  inFlight: number;
  byCode: Record<string, number>;
  latencyMs: { p50: number; p90: number; p99: number };
  retries?: number;
  failovers?: number;
  lastFailure?: { time: number; code: string; message: string };
}

export interface StatsFeed {
  application: string;
  pid: number;
  time: number;
  startTime: number;
  methods: MethodStats[];
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

export function statsFeed(store: MetricsStore, now: number = Date.now()): StatsFeed {
  return {
    application: store.application,
    pid: process.pid,
    time: now,
    startTime: store.startTime,
    methods: store.methods().map((m) => {
      const calls = m.calls;
      const stats: MethodStats = {
        side: m.side,
        service: m.service.name,
        version: m.service.version,
        group: m.service.group,
        method: m.method,
        calls,
        failures: calls - m.ok,
        inFlight: m.inFlight,
        byCode: m.byCode(),
        latencyMs: {
          p50: round(m.latency.quantileMs(0.5)),
          p90: round(m.latency.quantileMs(0.9)),
          p99: round(m.latency.quantileMs(0.99)),
        },
      };
      if (m.side === 'consumer') {
        stats.retries = m.retries;
        stats.failovers = m.failovers;
      }
      if (m.lastFailure !== undefined) stats.lastFailure = { ...m.lastFailure };
      return stats;
    }),
  };
}
