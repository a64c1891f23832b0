/**
 * The admin `/stats` feed (the dashboard reads it): per method and side, cumulative since the app
 * started — calls, failures, by code, in flight, latency percentiles (from the latency histogram,
 * interpolated inside buckets) with the min, max and mean —, the min, max and mean latency per window
 * (`statsWindowMs`: the window being filled and the whole one before it), and the last failure with the
 * reference it was quoted to its caller under (a scrubbed system error: the provider's log line names
 * it too).
 */
import { knownReference } from '../core/error-payload.js';
import type { WindowFigures } from './latency-window.js';
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
  /** Since the app started. */
  latencyMs: { p50: number; p90: number; p99: number; min: number; max: number; mean: number };
  /** Min, max and mean per window of `ms`: the one being filled, and the whole one before it. */
  latencyWindow: { ms: number; current?: WindowFigures; previous?: WindowFigures };
  retries?: number;
  failovers?: number;
  /** Calls shed under overload by reason (`deadline`, `expired`, `throttled`), when any were. */
  shed?: Record<string, number>;
  /**
   * Provider: how long calls waited between being read and their method starting to run, since start
   * (once one ran).
   */
  queueMs?: { p50: number; p99: number; mean: number };
  /** A stream method's streams (once one opened): opened, open now, ended by code, messages, durations. */
  streams?: StreamStats;
  /** `ref`: the reference the failure was quoted to its caller under, when it was given one. */
  lastFailure?: { time: number; code: string; message: string; ref?: string };
}

export interface StreamStats {
  opened: number;
  open: number;
  /** Ended streams by code (`OK`: a clean end). */
  byCode: Record<string, number>;
  /** Messages received (`in`) and sent (`out`) by this side, open streams included. */
  messages: { in: number; out: number };
  /** Durations of ended streams. */
  durationMs: { p50: number; p99: number; mean: number };
}

export interface StatsFeed {
  application: string;
  pid: number;
  time: number;
  startTime: number;
  methods: MethodStats[];
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

const roundFigures = (figures: WindowFigures): WindowFigures => ({
  ...figures,
  minMs: round(figures.minMs),
  maxMs: round(figures.maxMs),
  meanMs: round(figures.meanMs),
});

export function statsFeed(store: MetricsStore, now: number = Date.now()): StatsFeed {
  return {
    application: store.application,
    pid: process.pid,
    time: now,
    startTime: store.startTime,
    methods: store.methods().map((m) => {
      const calls = m.calls;
      const overall = m.latency.overall();
      const { current, previous } = m.latency.windows();
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
          min: round(overall.minMs),
          max: round(overall.maxMs),
          mean: round(overall.meanMs),
        },
        latencyWindow: {
          ms: m.latency.windowMs,
          ...(current === undefined ? {} : { current: roundFigures(current) }),
          ...(previous === undefined ? {} : { previous: roundFigures(previous) }),
        },
      };
      if (m.side === 'consumer') {
        stats.retries = m.retries;
        stats.failovers = m.failovers;
      }
      const streams = m.streams;
      if (streams !== undefined) {
        const { duration } = streams;
        stats.streams = {
          opened: streams.opened,
          open: streams.open,
          byCode: streams.byCode(),
          messages: { in: streams.messages('in'), out: streams.messages('out') },
          durationMs: {
            p50: round(duration.quantileMs(0.5)),
            p99: round(duration.quantileMs(0.99)),
            mean: duration.count === 0 ? 0 : round(duration.sumMs / duration.count),
          },
        };
      }
      if (m.shed.size > 0) stats.shed = Object.fromEntries(m.shed);
      const queue = m.queue;
      if (queue !== undefined && queue.count > 0) {
        stats.queueMs = {
          p50: round(queue.quantileMs(0.5)),
          p99: round(queue.quantileMs(0.99)),
          mean: round(queue.sumMs / queue.count),
        };
      }
      const last = m.lastFailure;
      if (last !== undefined) {
        const ref = knownReference(last.error);
        stats.lastFailure = {
          time: last.time,
          code: last.code,
          message: last.message,
          ...(ref === undefined ? {} : { ref }),
        };
      }
      return stats;
    }),
  };
}
