/**
 * An app's observability parts: its metrics store (counted by the `metrics` filters), the Prometheus
 * registry that exposes it with the gauges read from the app's parts when scraped (connections,
 * providers per service and their state, ejections, registries), and the views the admin endpoints
 * serve (services, configuration with sources, stats, readiness).
 */
import type { AdminSource } from '../admin/admin-server.js';
import type { Consumer } from '../consumer/consumer.js';
import type { Directory } from '../consumer/directory.js';
import type { ProviderEndpoint } from '../consumer/endpoint.js';
import type { ServiceKey } from '../core/service-key.js';
import type { ConcurrencyLimiter } from '../governance/concurrency-limiter.js';
import { weightFactorOf } from '../loadbalance/effective-weight.js';
import type { GaugeSample, MetricsStore } from '../observability/metrics-store.js';
import {
  PROMETHEUS_CONTENT_TYPE,
  type Registry,
  registerCallistoMetrics,
} from '../observability/prometheus.js';
import { statsFeed } from '../observability/stats.js';
import type { Provider } from '../provider/provider.js';
import type { ConsumerRecord } from '../registry/provider-record.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { redactConfig } from '../security/redact.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { CallistoConfig } from './config/callisto-config.js';
import { DEFAULT_CONFIG } from './config/callisto-config.js';
import { endpointWeights } from './endpoint-weights.js';

export type EndpointState = 'healthy' | 'warming' | 'ejected' | 'disabled' | 'draining';
const ENDPOINT_STATES: readonly EndpointState[] = ['healthy', 'warming', 'ejected', 'disabled', 'draining'];

export interface AppObservability {
  readonly store: MetricsStore;
  readonly registry: Registry;
  /** The Prometheus exposition text of the app's registry. */
  metricsText(): Promise<string>;
  /** Records a reference (for /services). */
  referred(definition: ServiceDefinition<unknown>): void;
  /** The admin endpoints' source. */
  adminSource(state: () => { state: string; ready: boolean }): AdminSource;
}

export interface ObservabilityParts {
  readonly config: CallistoConfig;
  readonly sourceOf: (key: string) => string | undefined;
  readonly provider: Provider;
  readonly consumer: Consumer;
  readonly registries: RegistrySet;
  /** The app's metrics store (the sides' filters count into it). */
  readonly store: MetricsStore;
  /** A prom-client registry to register in (the app makes its own otherwise). */
  readonly registry?: Registry | undefined;
}

const keyLabels = (key: ServiceKey) => ({ service: key.name, version: key.version, group: key.group });

/** How the consumer sees `endpoint` now. */
export function endpointState(
  endpoint: ProviderEndpoint,
  directory: Directory,
  warmupMs: number,
): EndpointState {
  if (endpoint.weight === 0) return 'disabled';
  const outlier = directory.detector?.state(endpoint.address);
  if (outlier !== undefined && outlier !== 'closed') return 'ejected';
  if (!endpoint.available) return 'draining';
  if (warmupMs > 0 && endpoint.startTime > 0 && Date.now() - endpoint.startTime < warmupMs) return 'warming';
  return 'healthy';
}

/** Credentials written in registry addresses (`redis://user:secret@host`); secret keys are hidden by redactConfig. */
function redact(key: string, value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\/\/[^/@\s]*@/, '//***@');
  if (Array.isArray(value)) return value.map((item) => redact(key, item));
  return value;
}

/** Every leaf key of the configuration with its value and where it came from. */
export function configView(config: CallistoConfig, sourceOf: (key: string) => string | undefined) {
  const keys: Array<{ key: string; value: unknown; source: string }> = [];
  const walk = (defaults: Record<string, unknown>, actual: Record<string, unknown>, prefix: string) => {
    for (const name of Object.keys(defaults)) {
      const key = prefix ? `${prefix}.${name}` : name;
      const fallback = defaults[name];
      const value = actual[name];
      if (
        fallback !== null &&
        typeof fallback === 'object' &&
        !Array.isArray(fallback) &&
        Object.keys(fallback).length > 0
      ) {
        walk(fallback as Record<string, unknown>, (value ?? {}) as Record<string, unknown>, key);
        continue;
      }
      keys.push({ key, value: redact(key, value), source: sourceOf(key) ?? 'default' });
    }
  };
  walk(
    DEFAULT_CONFIG as unknown as Record<string, unknown>,
    redactConfig(config) as unknown as Record<string, unknown>,
    '',
  );
  return { application: config.application, keys };
}

export function createAppObservability(parts: ObservabilityParts): AppObservability {
  const { config, provider, consumer, registries } = parts;
  const { store } = parts;
  const referred = new Map<string, ServiceDefinition<unknown>>();
  const startTime = Date.now();
  const warmupMs = config.consumer.warmupMs;

  const directories = (): Directory[] => [...consumer.directories().values()];
  const endpointSamples = (read: (endpoint: ProviderEndpoint, directory: Directory) => GaugeSample[]) => () =>
    directories().flatMap((directory) => directory.list().flatMap((endpoint) => read(endpoint, directory)));

  store.addGauge({
    name: 'callisto_server_connections',
    help: 'Consumer connections open to this provider',
    type: 'gauge',
    collect: () => {
      const count = provider.connectionCount;
      return count === undefined ? [] : [{ labels: {}, value: count }];
    },
  });
  /** One sample read from the provider's adaptive limiter, when it is on and serves. */
  const limiterGauge = (read: (limiter: ConcurrencyLimiter) => number) => () => {
    const limiter = provider.limiter;
    return limiter === undefined || provider.table.list().length === 0
      ? []
      : [{ labels: {}, value: read(limiter) }];
  };
  store.addGauge({
    name: 'callisto_adaptive_limit',
    help: "The provider's adaptive concurrency limit: calls it admits in flight while overloaded before refusing Overloaded (server.adaptiveLimit)",
    type: 'gauge',
    collect: limiterGauge((limiter) => limiter.limit),
  });
  store.addGauge({
    name: 'callisto_adaptive_inflight',
    help: 'Calls in flight in the provider, counted against its adaptive concurrency limit',
    type: 'gauge',
    collect: limiterGauge((limiter) => limiter.inflight),
  });
  store.addGauge({
    name: 'callisto_adaptive_overloaded',
    help: 'Whether the provider counts as overloaded (1: its event loop saturated and its queue growing; its adaptive limit applies), else 0',
    type: 'gauge',
    collect: limiterGauge((limiter) => (limiter.overloaded ? 1 : 0)),
  });
  store.addGauge({
    name: 'callisto_adaptive_admitted_total',
    help: "Calls the provider's adaptive concurrency limit admitted (those it refused: callisto_shed_total, reason limit)",
    type: 'counter',
    collect: limiterGauge((limiter) => limiter.admitted),
  });
  store.addGauge({
    name: 'callisto_event_loop_delay_seconds',
    help: "The provider's event-loop delay, mean over the last 100 ms: how long a request waits to be read (the queue before admission)",
    type: 'gauge',
    collect: limiterGauge((limiter) => limiter.loopDelayMs / 1000),
  });
  store.addGauge({
    name: 'callisto_client_connections',
    help: 'Connections open from this consumer to providers',
    type: 'gauge',
    collect: () => [{ labels: {}, value: consumer.pool.size }],
  });
  store.addGauge({
    name: 'callisto_providers',
    help: 'Providers the consumer knows per service, by state (healthy, warming, ejected, disabled, draining)',
    type: 'gauge',
    collect: () =>
      directories().flatMap((directory) => {
        const counts = new Map<EndpointState, number>(ENDPOINT_STATES.map((state) => [state, 0]));
        for (const endpoint of directory.list()) {
          const state = endpointState(endpoint, directory, warmupMs);
          counts.set(state, counts.get(state)! + 1);
        }
        return [...counts].map(([state, value]) => ({
          labels: { ...keyLabels(directory.key), state },
          value,
        }));
      }),
  });
  store.addGauge({
    name: 'callisto_endpoint_state',
    help: 'One provider (peer) as the consumer sees it: 1 for its current state (healthy, warming, ejected, disabled, draining)',
    type: 'gauge',
    collect: endpointSamples((endpoint, directory) => [
      {
        labels: {
          ...keyLabels(directory.key),
          peer: endpoint.address,
          state: endpointState(endpoint, directory, warmupMs),
        },
        value: 1,
      },
    ]),
  });
  store.addGauge({
    name: 'callisto_endpoint_in_flight',
    help: 'Calls in flight from this consumer to one provider (peer)',
    type: 'gauge',
    collect: endpointSamples((endpoint, directory) => [
      { labels: { ...keyLabels(directory.key), peer: endpoint.address }, value: endpoint.stats.active },
    ]),
  });
  store.addGauge({
    name: 'callisto_endpoint_latency_seconds',
    help: 'Mean latency of one provider (peer) over the recent window (what the latency-aware balancers read)',
    type: 'gauge',
    collect: endpointSamples((endpoint, directory) => [
      {
        labels: { ...keyLabels(directory.key), peer: endpoint.address },
        value: endpoint.stats.meanLatencyMs / 1000,
      },
    ]),
  });
  store.addGauge({
    name: 'callisto_endpoint_weight_factor',
    help: 'Learnt share of one provider (peer) weight, 0.1..1: failures lower it, successes restore it (consumer.effectiveWeight)',
    type: 'gauge',
    collect: endpointSamples((endpoint, directory) => [
      { labels: { ...keyLabels(directory.key), peer: endpoint.address }, value: weightFactorOf(endpoint) },
    ]),
  });
  store.addGauge({
    name: 'callisto_ejections_total',
    help: 'Providers ejected by the outlier detector, per service',
    type: 'counter',
    collect: () =>
      directories().flatMap((directory) =>
        directory.detector
          ? [{ labels: keyLabels(directory.key), value: directory.detector.ejectionsTotal }]
          : [],
      ),
  });
  store.addGauge({
    name: 'callisto_registry_connected',
    help: 'Whether a registry is connected (1) or not (0), by kind',
    type: 'gauge',
    collect: () =>
      registryStatus.map(({ kind, status }) => ({
        labels: { registry: kind },
        value: status === 'connected' ? 1 : 0,
      })),
  });
  /** Registry status, refreshed on each scrape (`created()` is a promise). */
  let registryStatus: Array<{ kind: string; status: string }> = [];
  const refreshRegistries = async () => {
    const list = await registries.created().catch(() => []);
    registryStatus = list.map((registry) => ({ kind: registry.kind, status: registry.status }));
  };

  const registry = registerCallistoMetrics(store, parts.registry);

  const methodsOf = (definition: ServiceDefinition<unknown>, names: Iterable<string>) =>
    [...names].map((name) => {
      const declaration = definition.methods?.[name] ?? {};
      return {
        name,
        idempotent: declaration.idempotent ?? false,
        oneway: declaration.oneway ?? false,
        ...(declaration.timeoutMs !== undefined ? { timeoutMs: declaration.timeoutMs } : {}),
        hasSchema: declaration.args !== undefined,
        ...(declaration.stream !== undefined ? { stream: declaration.stream } : {}),
      };
    });

  /** The consumers the registries list for `key` (those that can tell), at most 2 s waited for. */
  const consumersOf = async (key: ServiceKey) => {
    const list = await registries.created().catch(() => []);
    const found = await Promise.all(
      list.map((registry) =>
        registry.consumers === undefined
          ? []
          : new Promise<ConsumerRecord[]>((resolve) => {
              const timer = setTimeout(() => resolve([]), 2_000);
              registry.consumers!(key).then(
                (records) => {
                  clearTimeout(timer);
                  resolve(records);
                },
                () => {
                  clearTimeout(timer);
                  resolve([]);
                },
              );
            }),
      ),
    );
    const seen = new Set<string>();
    return found.flat().flatMap((record) => {
      const id = `${record.host}|${record.pid}|${record.application}`;
      if (seen.has(id)) return [];
      seen.add(id);
      return [
        { application: record.application, host: record.host, pid: record.pid, startTime: record.startTime },
      ];
    });
  };

  const services = async () => {
    const provided = await Promise.all(
      provider.table.list().map(async ({ definition, methods }) => ({
        side: 'provider' as const,
        service: definition.name,
        version: definition.version,
        group: definition.group,
        methods: methodsOf(definition, methods.keys()),
        address: provider.advertisedAddress ?? null,
        consumers: await consumersOf(definition),
      })),
    );
    const byKey = new Map<string, Directory[]>();
    for (const directory of directories()) {
      const key = `${directory.key.group}/${directory.key.name}:${directory.key.version}`;
      byKey.set(key, [...(byKey.get(key) ?? []), directory]);
    }
    const consumed = [...referred.values()].map((definition) => {
      const key = `${definition.group}/${definition.name}:${definition.version}`;
      return {
        side: 'consumer' as const,
        service: definition.name,
        version: definition.version,
        group: definition.group,
        methods: methodsOf(definition, Object.keys(definition.methods ?? {})),
        providers: (byKey.get(key) ?? []).flatMap((directory) =>
          directory.list().map((endpoint) => ({
            address: endpoint.address,
            state: endpointState(endpoint, directory, warmupMs),
            weight: endpoint.weight,
            weightFactor: Math.round(weightFactorOf(endpoint) * 1000) / 1000,
            inFlight: endpoint.stats.active,
            ewmaMs: Math.round(endpoint.stats.meanLatencyMs * 1000) / 1000,
            ...(endpoint.record?.application ? { application: endpoint.record.application } : {}),
          })),
        ),
      };
    });
    return { application: config.application, services: [...provided, ...consumed] };
  };

  return {
    store,
    registry,
    async metricsText() {
      await refreshRegistries();
      return registry.metrics();
    },
    referred(definition) {
      referred.set(`${definition.group}/${definition.name}:${definition.version}`, definition);
    },
    adminSource(state) {
      return {
        application: config.application,
        health: () => ({ status: 'ok', state: state().state, uptimeMs: Date.now() - startTime }),
        readiness: () => {
          const { state: now, ready } = state();
          return ready
            ? { ready, state: now }
            : {
                ready,
                state: now,
                reason: now === 'stopping' || now === 'closed' ? 'shutting down' : 'not started',
              };
        },
        metrics: async () => {
          await refreshRegistries();
          return { contentType: PROMETHEUS_CONTENT_TYPE, text: await registry.metrics() };
        },
        services,
        config: () => configView(config, parts.sourceOf),
        stats: () => ({
          ...statsFeed(store),
          endpoints: endpointWeights(directories(), config.consumer),
          ...adaptiveLimitStats(provider),
        }),
      };
    },
  };
}

/** `/stats`' `adaptiveLimit`: the provider's adaptive concurrency limit, when it is on and serves. */
function adaptiveLimitStats(provider: Provider): { adaptiveLimit?: AdaptiveLimitStats } {
  const limiter = provider.limiter;
  if (limiter === undefined || provider.table.list().length === 0) return {};
  const round = (ms: number): number => Math.round(ms * 1000) / 1000;
  return {
    adaptiveLimit: {
      limit: limiter.limit,
      inflight: limiter.inflight,
      overloaded: limiter.overloaded,
      admitted: limiter.admitted,
      refused: limiter.refused,
      shortRttMs: round(limiter.shortRttMs),
      longRttMs: round(limiter.longRttMs),
      loopDelayMs: round(limiter.loopDelayMs),
    },
  };
}

/** The adaptive concurrency limit as `/stats` shows it. */
export interface AdaptiveLimitStats {
  /** The limit that applies while overloaded. */
  limit: number;
  inflight: number;
  /** Whether the provider counts as overloaded now (the limit applies only then). */
  overloaded: boolean;
  /** Calls admitted since the start. */
  admitted: number;
  /** Calls refused at the limit since the start. */
  refused: number;
  /** The last window's latency (event-loop delay included) and the long-term one, ms. */
  shortRttMs: number;
  longRttMs: number;
  /** The event loop's mean delay over the last 100 ms: the wait before a request is read, ms. */
  loopDelayMs: number;
}
