/**
 * An app's metrics: one {@link MethodMetrics} per side, service key and method (made when the method's
 * filter chain is built, so a call finds its counters without a lookup), and gauges read when scraped
 * (connections, endpoint states, registry status) from sources the app registers.
 */
import { type ServiceKey, serviceKeyString } from '../core/service-key.js';
import { MethodMetrics, type MetricSide } from './method-metrics.js';

/** A value read at scrape time, with its labels. */
export interface GaugeSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A gauge (or a cumulative counter kept elsewhere) read when scraped. */
export interface GaugeSource {
  /** Full metric name, e.g. `callisto_client_connections`. */
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter';
  collect(): GaugeSample[];
}

export interface MetricsStore {
  /** The application label of every metric. */
  readonly application: string;
  /** When the store was made (ms since epoch): the start of every cumulative count. */
  readonly startTime: number;
  /** The counters of `method` of `service` on `side` (the same object for the same key). */
  method(side: MetricSide, service: ServiceKey, method: string): MethodMetrics;
  methods(): MethodMetrics[];
  addGauge(source: GaugeSource): void;
  gauges(): readonly GaugeSource[];
}

/** `windowMs`: the length of the latency windows /stats reports (`statsWindowMs`). */
export function createMetricsStore(application: string, windowMs?: number): MetricsStore {
  const byKey = new Map<string, MethodMetrics>();
  const gauges: GaugeSource[] = [];
  return {
    application,
    startTime: Date.now(),
    method(side, service, method) {
      const key = `${side}|${serviceKeyString(service)}|${method}`;
      let metrics = byKey.get(key);
      if (metrics === undefined) {
        metrics = new MethodMetrics(
          side,
          { name: service.name, version: service.version, group: service.group },
          method,
          windowMs,
        );
        byKey.set(key, metrics);
      }
      return metrics;
    },
    methods: () => [...byKey.values()],
    addGauge(source) {
      gauges.push(source);
    },
    gauges: () => gauges,
  };
}
