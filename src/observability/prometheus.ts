/**
 * Callisto's metrics in a prom-client registry (the app's own, or one the user passes in): each metric
 * is a collector that reads the apps' metric stores when scraped, so counting on the call path never
 * touches prom-client. Several apps may share one registry: their series differ by `application`.
 * Names and labels: docs/observability.md.
 */
import { Registry } from 'prom-client';
import type { MethodMetrics } from './method-metrics.js';
import type { GaugeSample, GaugeSource, MetricsStore } from './metrics-store.js';
import type { StreamMetrics } from './stream-metrics.js';

type Labels = Record<string, string | number>;

interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
}

interface MetricObject {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  values: Value[];
  aggregator: 'sum';
}

/** A prom-client metric (what `registry.registerMetric` takes) reading from every store attached to it. */
class StoreCollector {
  readonly stores: MetricsStore[] = [];
  readonly aggregator = 'sum';
  readonly callisto = true;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricObject['type'],
    private readonly read: (store: MetricsStore, out: Value[]) => void,
  ) {}

  get(): MetricObject {
    const values: Value[] = [];
    for (const store of this.stores) this.read(store, values);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }

  reset(): void {}
}

const methodLabels = (store: MetricsStore, m: MethodMetrics): Labels => ({
  application: store.application,
  side: m.side,
  service: m.service.name,
  version: m.service.version,
  group: m.service.group,
  method: m.method,
});

/** The bucket counts, sum (ms) and count of a latency histogram. */
interface Histogram {
  /** Upper bounds, seconds; +Inf implied. */
  readonly boundsSeconds: readonly number[];
  readonly counts: readonly number[];
  readonly sumMs: number;
  readonly count: number;
}

function histogramValues(labels: Labels, histogram: Histogram, name: string, out: Value[]): void {
  const { counts } = histogram;
  let cumulative = 0;
  const bounds = histogram.boundsSeconds;
  for (let i = 0; i < bounds.length; i++) {
    cumulative += counts[i]!;
    out.push({
      metricName: `${name}_bucket`,
      labels: { ...labels, le: bounds[i]! },
      value: cumulative,
    });
  }
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: histogram.count });
  out.push({ metricName: `${name}_sum`, labels, value: histogram.sumMs / 1000 });
  out.push({ metricName: `${name}_count`, labels, value: histogram.count });
}

/** The per-method metrics (every name Callisto registers, besides the gauge sources the app adds). */
function methodCollectors(): StoreCollector[] {
  return [
    new StoreCollector(
      'callisto_calls_total',
      'Calls by outcome: code is OK or the RpcError code (refusals included); side is provider (calls served) or consumer (calls made, after retries)',
      'counter',
      (store, out) => {
        for (const m of store.methods()) {
          const labels = methodLabels(store, m);
          if (m.ok > 0 || m.failures.size === 0) out.push({ labels: { ...labels, code: 'OK' }, value: m.ok });
          for (const [code, count] of m.failures) out.push({ labels: { ...labels, code }, value: count });
        }
      },
    ),
    new StoreCollector(
      'callisto_call_duration_seconds',
      'Call latency: on the provider from arrival to answer, on the consumer as the caller waited (retries included)',
      'histogram',
      (store, out) => {
        for (const m of store.methods())
          histogramValues(methodLabels(store, m), m.latency, 'callisto_call_duration_seconds', out);
      },
    ),
    new StoreCollector(
      'callisto_call_queue_seconds',
      "Provider: how long a call waited between being read and its method starting to run (behind the frames read before it, a filter that answered later, the loop's other work); the wait before it was read is callisto_event_loop_delay_seconds",
      'histogram',
      (store, out) => {
        for (const m of store.methods()) {
          if (m.queue !== undefined)
            histogramValues(methodLabels(store, m), m.queue, 'callisto_call_queue_seconds', out);
        }
      },
    ),
    new StoreCollector('callisto_calls_in_flight', 'Calls started and not ended', 'gauge', (store, out) => {
      for (const m of store.methods()) out.push({ labels: methodLabels(store, m), value: m.inFlight });
    }),
    new StoreCollector(
      'callisto_attempts_total',
      'Consumer attempts by provider address (peer) and outcome code',
      'counter',
      (store, out) => {
        for (const m of store.methods()) {
          if (m.side !== 'consumer') continue;
          const labels = methodLabels(store, m);
          for (const [peer, counts] of m.peers)
            for (const [code, count] of counts.byCode)
              out.push({ labels: { ...labels, peer, code }, value: count });
        }
      },
    ),
    new StoreCollector(
      'callisto_retries_total',
      'Consumer attempts after the first of a call',
      'counter',
      (store, out) => {
        for (const m of store.methods())
          if (m.side === 'consumer') out.push({ labels: methodLabels(store, m), value: m.retries });
      },
    ),
    new StoreCollector(
      'callisto_failovers_total',
      'Consumer retries that went to another provider than the attempt before',
      'counter',
      (store, out) => {
        for (const m of store.methods())
          if (m.side === 'consumer') out.push({ labels: methodLabels(store, m), value: m.failovers });
      },
    ),
    new StoreCollector(
      'callisto_shed_total',
      'Calls shed under overload, by reason: provider deadline (refused by deadline-aware admission, Overloaded) and expired (deadline passed while it waited, not run, Timeout); consumer throttled (attempts refused by adaptive throttling before sending, Overloaded)',
      'counter',
      (store, out) => {
        for (const m of store.methods()) {
          const labels = methodLabels(store, m);
          for (const [reason, count] of m.shed) out.push({ labels: { ...labels, reason }, value: count });
        }
      },
    ),
    new StoreCollector(
      'callisto_received_bytes_total',
      'Provider: request argument bytes received (as framed, before decompression)',
      'counter',
      (store, out) => {
        for (const m of store.methods())
          if (m.side === 'provider') out.push({ labels: methodLabels(store, m), value: m.bytesIn });
      },
    ),
    ...streamCollectors(),
    new StoreCollector(
      'callisto_last_failure_timestamp_seconds',
      'When a method last failed (unix time, seconds), by the code it failed with',
      'gauge',
      (store, out) => {
        for (const m of store.methods()) {
          const last = m.lastFailure;
          if (last !== undefined)
            out.push({ labels: { ...methodLabels(store, m), code: last.code }, value: last.time / 1000 });
        }
      },
    ),
  ];
}

/** The per-method stream metrics (methods that opened a stream only). */
function streamCollectors(): StoreCollector[] {
  const each = (store: MetricsStore, visit: (labels: Labels, streams: StreamMetrics) => void): void => {
    for (const m of store.methods()) if (m.streams !== undefined) visit(methodLabels(store, m), m.streams);
  };
  return [
    new StoreCollector(
      'callisto_streams_opened_total',
      'Streams opened (a stream call that reached the filters, refused ones included)',
      'counter',
      (store, out) => each(store, (labels, streams) => out.push({ labels, value: streams.opened })),
    ),
    new StoreCollector('callisto_streams_open', 'Streams open now', 'gauge', (store, out) =>
      each(store, (labels, streams) => out.push({ labels, value: streams.open })),
    ),
    new StoreCollector(
      'callisto_streams_ended_total',
      'Streams ended, by outcome: code is OK (a clean end) or the RpcError code (Cancelled, Timeout, Shutdown, refusals, what the handler threw)',
      'counter',
      (store, out) =>
        each(store, (labels, streams) => {
          for (const [code, count] of streams.ended) out.push({ labels: { ...labels, code }, value: count });
        }),
    ),
    new StoreCollector(
      'callisto_stream_messages_total',
      "Stream messages, by direction: in (received by this side: on the provider taken by the handler, on the consumer read by the caller) or out (sent: yielded by the handler, taken from the caller's input); open streams included",
      'counter',
      (store, out) =>
        each(store, (labels, streams) => {
          out.push({ labels: { ...labels, direction: 'in' }, value: streams.messages('in') });
          out.push({ labels: { ...labels, direction: 'out' }, value: streams.messages('out') });
        }),
    ),
    new StoreCollector(
      'callisto_stream_duration_seconds',
      'Durations of ended streams, from opening to end',
      'histogram',
      (store, out) =>
        each(store, (labels, streams) =>
          histogramValues(labels, streams.duration, 'callisto_stream_duration_seconds', out),
        ),
    ),
  ];
}

function gaugeCollector(source: GaugeSource): StoreCollector {
  return new StoreCollector(source.name, source.help, source.type, (store, out) => {
    for (const candidate of store.gauges()) {
      if (candidate.name !== source.name) continue;
      for (const sample of candidate.collect() as GaugeSample[])
        out.push({ labels: { application: store.application, ...sample.labels }, value: sample.value });
    }
  });
}

function attach(registry: Registry, collector: StoreCollector, store: MetricsStore): void {
  const existing = registry.getSingleMetric(collector.name) as unknown as StoreCollector | undefined;
  if (existing !== undefined) {
    if (existing.callisto !== true) {
      throw new Error(
        `the Prometheus registry already has a metric named ${collector.name} that is not Callisto's`,
      );
    }
    if (!existing.stores.includes(store)) existing.stores.push(store);
    return;
  }
  collector.stores.push(store);
  registry.registerMetric(collector as never);
}

/**
 * Registers `store`'s metrics in `registry` (a new one when none is given) and returns it. Gauge
 * sources added to the store later are registered by {@link attachGauges}.
 */
export function registerCallistoMetrics(store: MetricsStore, registry: Registry = new Registry()): Registry {
  for (const collector of methodCollectors()) attach(registry, collector, store);
  attachGauges(store, registry);
  return registry;
}

/** Registers the store's gauge sources (again: already registered ones are skipped). */
export function attachGauges(store: MetricsStore, registry: Registry): void {
  for (const source of store.gauges()) attach(registry, gaugeCollector(source), store);
}

/** Detaches `store` from `registry`'s Callisto metrics (an app that closed). */
export function detachCallistoMetrics(store: MetricsStore, registry: Registry): void {
  for (const metric of registry.getMetricsAsArray() as unknown as StoreCollector[]) {
    if (metric.callisto !== true) continue;
    const index = metric.stores.indexOf(store);
    if (index >= 0) metric.stores.splice(index, 1);
  }
}

export { Registry };
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
