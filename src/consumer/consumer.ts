/**
 * The consumer side of an app: the connection pool shared by every reference, one directory per
 * service (and source of providers), and `refer()`, which builds each method's path once:
 *
 *   proxy -> per-call filters -> cluster strategy -> directory.select (balancer, health)
 *         -> per-attempt filters -> connection (or the in-process provider) -> frames
 *
 * See docs/architecture.md.
 */
import type { ClusterInvoker } from '../cluster/cluster.js';
import { type RetryPolicy, resolveRetryOptions } from '../cluster/retry-policy.js';
import { ConfigError } from '../core/config-error.js';
import {
  compileChain,
  type FilterEntry,
  type NamedFilter,
  namedFilter,
  orderFilters,
} from '../core/filter.js';
import type { Invocation, Invoker } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import type { ExtensionRegistry, ExtensionTable } from '../extension/extension-registry.js';
import { attemptDeadlineFilter } from '../filters/attempt-deadline.js';
import { consumerLimitFilter, createConsumerLimitState } from '../filters/consumer-limit.js';
import { endpointStatsFilter } from '../filters/endpoint-stats.js';
import { metricsCallFilter } from '../filters/metrics-call.js';
import { metricsClientFilter } from '../filters/metrics-client.js';
import { mockFallbackFilter } from '../filters/mock-fallback.js';
import { observeClientFilter } from '../filters/observe-client.js';
import { outlierFilter } from '../filters/outlier.js';
import { createResultCache } from '../filters/result-cache.js';
import { tracingClientFilter } from '../filters/tracing-client.js';
import { hasLimits } from '../governance/limit-options.js';
import { APPLICATION_ATTACHMENT } from '../governance/provider-limiters.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS } from '../loadbalance/load-balancer.js';
import type { LogFields, Logger } from '../observability/logger.js';
import type { MethodMetrics } from '../observability/method-metrics.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import type { ConnectionOptions } from '../protocol/connection-options.js';
import type { MockMode } from '../registry/override-record.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { methodSerializer } from '../serialization/method-serializer.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { MethodDeclaration, ServiceDefinition } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import { mockAnswer, runCallChain } from './call-chain.js';
import type { ClientInvocation } from './client-invocation.js';
import { awaitWire, createClusterContext } from './cluster-context.js';
import type { ConnectionPool } from './connection-pool.js';
import type { ConsumerConfig } from './consumer-options.js';
import { createConsumerPool } from './consumer-pool.js';
import { createDirectory, type Directory } from './directory.js';
import { directFeed, inProcessFeed, registryFeed } from './directory-feed.js';
import { IN_PROCESS } from './endpoint.js';
import { checkIdempotentOnly } from './idempotent-only.js';
import { createInProcessTarget, type InProcessProvider } from './in-process.js';
import { MethodRoute } from './method-route.js';
import { createMockCatalog, hasMock } from './mock-methods.js';
import { callWithMockSwitch } from './mock-switch.js';
import { createReference, type MethodRuntime } from './reference.js';
import type { MethodReferenceOptions, ReferenceOptions } from './reference-options.js';
import { type ReferenceTargets, resolveReferenceTargets } from './reference-targets.js';
import { resolveReferenceOptions } from './resolve-reference-options.js';

/** What the consumer side is configured with (the app's configuration, resolved). */
export interface ConsumerSettings {
  /** Announced to registries in consumer records. */
  readonly application: string;
  /** The app's registry addresses (a reference may name its own). */
  readonly registries: readonly string[];
  /** How long a first discovery waits for a registry's list before the snapshot. */
  readonly startTimeoutMs: number;
  /** The app's consumer options, the defaults of every reference. */
  readonly consumer: ConsumerConfig;
  /** Every connection's options. */
  readonly connection: ConnectionOptions;
}

export interface ConsumerParts {
  readonly settings: ConsumerSettings;
  readonly extensions: ExtensionRegistry;
  readonly serializers: SerializerTable;
  readonly registries: RegistrySet;
  /** The app's own provider, for in-process calls. */
  readonly inProcess: InProcessProvider;
  /** The app's consumer filters (per call, or per attempt for those that say so). */
  readonly filters: readonly FilterEntry[];
  readonly logger: Logger;
  /** Where the `metrics-call` and `metrics-client` filters count (none: no metrics filters). */
  readonly metrics?: MetricsStore | undefined;
  /** Whether every call has the `tracing-client` filter (it does nothing while no SDK is registered). */
  readonly tracing?: boolean | undefined;
}

export interface Consumer {
  readonly pool: ConnectionPool;
  refer<T>(definition: ServiceDefinition<T>, options?: ReferenceOptions<T>): Remote<T>;
  /** Every directory, by service key and source (admin view and tests). */
  directories(): ReadonlyMap<string, Directory>;
  /** Stops following registries and closes connections after their calls complete. */
  close(): Promise<void>;
  destroy(): void;
}

/** A method's retry delays, from its consumer options (`retry`, `retries`, `retryDelayMs`, `retryMaxDelayMs`). */
export function retryPolicyFor(
  extensions: ExtensionTable,
  config: Pick<ConsumerConfig, 'retry' | 'retries' | 'retryDelayMs' | 'retryMaxDelayMs'>,
): RetryPolicy {
  return extensions.get(
    'retry',
    config.retry,
  )(
    resolveRetryOptions({
      maxAttempts: config.retries + 1,
      baseDelayMs: config.retryDelayMs,
      maxDelayMs: Math.max(config.retryDelayMs, config.retryMaxDelayMs),
    }),
  );
}

/**
 * Callisto's per-attempt filters of a method: `deadline`, `observe`, `endpoint-stats`, and `outlier`
 * when outlier detection is on (reporting to the service's detector, made here on first use).
 */
function attemptBuiltins(
  label: string,
  config: ConsumerConfig,
  directory: Directory | undefined,
  metrics: MethodMetrics | undefined,
): NamedFilter<ClientInvocation>[] {
  const builtin: NamedFilter<ClientInvocation>[] = [
    attemptDeadlineFilter(label, config.attemptTimeoutMs),
    observeClientFilter(),
    endpointStatsFilter(),
  ];
  if (metrics !== undefined) builtin.push(metricsClientFilter(metrics));
  if (config.outlierDetection) {
    const detector = directory?.outlierDetector({
      maxEjectionRatio: config.maxEjectionRatio,
      consecutiveFailures: config.ejectAfterFailures,
      baseEjectionMs: config.ejectionMs,
      maxEjectionMs: Math.max(config.ejectionMs, 300_000),
    });
    builtin.push(outlierFilter(detector ?? { record() {} }));
  }
  return builtin;
}

/** Splits consumer filter entries by position: plain functions are per call. */
function byPosition(
  entries: readonly FilterEntry[],
  where: string,
): { call: NamedFilter[]; attempt: NamedFilter[] } {
  const call: NamedFilter[] = [];
  const attempt: NamedFilter[] = [];
  entries.forEach((entry, i) => {
    const position = typeof entry === 'function' ? 'call' : entry?.position;
    if (position === 'attempt') attempt.push(namedFilter(entry, 'attempt', `${where}[${i}]`));
    else if (position === 'call') call.push(namedFilter(entry, 'call', `${where}[${i}]`));
    else {
      throw new ConfigError(
        `${where}[${i}]`,
        (entry as NamedFilter | undefined)?.name ?? entry,
        'a consumer filter: a function, or defineFilter({ position: "call" | "attempt" })',
        {
          problem: `a ${String(position)} filter cannot run on the consumer`,
        },
      );
    }
  });
  return { call, attempt };
}

export function createConsumer(parts: ConsumerParts): Consumer {
  const { settings, extensions, serializers, logger } = parts;
  const app = byPosition(parts.filters, 'filters.consumer');
  const directories = new Map<string, Directory>();
  /** References holding each directory (releaseReference closes a directory nobody holds). */
  const holders = new Map<string, number>();
  const closers: Array<() => void> = [];
  const log = (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) =>
    logger[level](message, fields);
  const pool = createConsumerPool({
    extensions,
    serializers,
    connection: {
      ...settings.connection,
      // suspicion at the first missed heartbeat, when the heartbeat is faster than suspectAfterMs
      suspectAfterMs: Math.min(settings.consumer.suspectAfterMs, settings.connection.heartbeat.intervalMs),
    },
    idleTimeoutMs: settings.consumer.idleTimeoutMs,
    logger,
    onHeartbeatRtt: (address, rttMs) => {
      for (const directory of directories.values()) directory.recordRtt(address, rttMs);
    },
  });
  const inProcessTarget = createInProcessTarget(parts.inProcess);
  /** The methods with a mock per service, announced in the consumer records. */
  const mockCatalog = createMockCatalog();

  /** The directory of a service and source, and its key in `directories`. */
  const directoryFor = (
    definition: ServiceDefinition<unknown>,
    targets: ReferenceTargets | 'in-process',
    announce: boolean,
  ): { key: string; directory: Directory } => {
    const { urls, registries: registryAddresses } =
      targets === 'in-process' ? { urls: undefined, registries: [] } : targets;
    const source =
      targets === 'in-process'
        ? IN_PROCESS
        : urls?.length
          ? `url:${urls.join(',')}`
          : `registry:${registryAddresses.join(',')}${announce ? '' : '|unannounced'}`;
    const key = `${serviceKeyString(definition)}|${source}`;
    let directory = directories.get(key);
    if (directory !== undefined) return { key, directory };
    if (targets === 'in-process') {
      directory = createDirectory({
        key: definition,
        feed: inProcessFeed(definition),
        link: () => ({ available: true, connection: () => inProcessTarget }),
      });
    } else if (urls?.length || registryAddresses.length > 0) {
      const link = (record: { host: string; port: number; transport?: string }) =>
        pool.handle(record.host, record.port, record.transport);
      directory = createDirectory({
        key: definition,
        pool,
        link,
        log,
        feed: urls?.length
          ? directFeed(definition, urls)
          : registryFeed({
              key: definition,
              registries: parts.registries,
              addresses: registryAddresses,
              application: settings.application,
              announce,
              mocks: () => mockCatalog.of(definition),
              snapshotDir: settings.consumer.snapshotDir,
              emptyProtection: settings.consumer.emptyProtection,
              startTimeoutMs: settings.startTimeoutMs,
              isHealthy: (record) =>
                pool.isHealthy(pool.handle(record.host, record.port, record.transport).address),
              onHealthChange: (listener) => pool.onHealthChange(listener),
              logger,
            }),
      });
    } else {
      throw new ConfigError(
        `refer(${definition.name}).url`,
        undefined,
        'a provider address (url) or a registry',
        {
          problem: `${definition.name} is no longer provided by this app and there is no registry`,
        },
      );
    }
    directories.set(key, directory);
    return { key, directory };
  };

  /** Drops one reference's hold on the directory `key`; the last one out closes it. */
  const letGo = async (key: string): Promise<void> => {
    const left = (holders.get(key) ?? 1) - 1;
    if (left > 0) {
      holders.set(key, left);
      return;
    }
    holders.delete(key);
    const directory = directories.get(key);
    directories.delete(key);
    await directory?.close();
  };

  /** The cluster strategy of one method over `directory`, with its per-attempt chain. */
  const clusterInvoker = (
    definition: ServiceDefinition<unknown>,
    method: string,
    directory: Directory,
    config: ConsumerConfig,
    methodOptions: MethodReferenceOptions,
    attemptFilters: readonly NamedFilter[],
    metrics: MethodMetrics | undefined,
    ownClosers: Array<() => void>,
  ): ClusterInvoker => {
    const label = `${definition.name}.${method}`;
    const builtin = attemptBuiltins(label, config, directory, metrics);
    const loadBalancer = extensions.get(
      'loadbalance',
      config.loadbalance,
    )({
      ...DEFAULT_LOAD_BALANCER_OPTIONS,
      warmupMs: config.warmupMs,
      hashArguments: methodOptions.hashArguments ?? DEFAULT_LOAD_BALANCER_OPTIONS.hashArguments,
    });
    const retryPolicy = retryPolicyFor(extensions, config);
    const context = createClusterContext({
      label,
      options: {
        retries: config.retries,
        forks: config.forks,
        sticky: config.sticky,
        failoverOnRateLimited: config.failoverOnRateLimited,
        failbackAttempts: config.failbackAttempts,
        failbackDelayMs: config.failbackDelayMs,
        failbackQueueSize: config.failbackQueueSize,
      },
      directory,
      loadBalancer,
      retryPolicy,
      retryBudgetRatio: config.retryBudgetRatio,
      attempt: compileChain<ClientInvocation>([...builtin, ...attemptFilters], awaitWire),
      log,
    });
    const strategy = extensions.get('cluster', config.cluster)(context);
    if (strategy.close) {
      const close = () => strategy.close!();
      closers.push(close);
      ownClosers.push(close);
    }
    return strategy;
  };

  return {
    pool,
    refer<T>(definition: ServiceDefinition<T>, options: ReferenceOptions<T> = {}): Remote<T> {
      const def = definition as ServiceDefinition<unknown>;
      const label = `refer(${definition.name})`;
      mockCatalog.add(definition, definition.methods, options.mockImpl);
      const resolved = resolveReferenceOptions(definition, options, settings.consumer, extensions);
      const base = resolved.reference;
      const serializer = serializers.byName(base.serializer);
      const mode = options.mock === true ? 'force' : options.mock || undefined;
      const targets =
        mode === 'force'
          ? undefined
          : resolveReferenceTargets(def, options as ReferenceOptions<unknown>, {
              extensions,
              appRegistries: settings.registries,
              inProcess: { injvm: base.injvm, provided: parts.inProcess.provides(def) },
            });
      const reference = byPosition(options.filters ?? [], `${label}.filters`);
      const referenceLimits = hasLimits(options.limits)
        ? createConsumerLimitState(label, options.limits!)
        : undefined;
      const announce = options.registerConsumer !== false;
      // What this reference holds, for releaseReference(): directories by key, strategies' closers.
      const held = new Set<string>();
      const ownClosers: Array<() => void> = [];
      let released = false;
      const referenceOptions = settings.consumer.sendApplication
        ? {
            ...options,
            attachments: { [APPLICATION_ATTACHMENT]: settings.application, ...options.attachments },
          }
        : options;
      return createReference<T>({
        definition,
        options: referenceOptions,
        async release() {
          if (released) return;
          released = true;
          for (const close of ownClosers.splice(0)) {
            close();
            const at = closers.indexOf(close);
            if (at !== -1) closers.splice(at, 1);
          }
          const keys = [...held];
          held.clear();
          await Promise.all(keys.map(letGo));
        },
        method(name): MethodRuntime {
          const declaration: MethodDeclaration = definition.methods?.[name] ?? {};
          const methodOptions: MethodReferenceOptions =
            (options.methods as Record<string, MethodReferenceOptions> | undefined)?.[name] ?? {};
          const config = resolved.configOf(name);
          const idempotent = methodOptions.idempotent ?? declaration.idempotent ?? false;
          if (mode !== 'force') {
            checkIdempotentOnly({
              label,
              method: name,
              cluster: config.cluster,
              factory: extensions.get('cluster', config.cluster),
              idempotent,
              setOn: { method: methodOptions.cluster, reference: options.cluster },
            });
          }
          const own = byPosition(methodOptions.filters ?? [], `${label}.methods.${name}.filters`);
          const mock = () => mockAnswer(options.mockImpl, name, declaration);
          const metrics = parts.metrics?.method('consumer', def, name);
          let terminal: Invoker;
          if (mode === 'force') {
            const answer = mock();
            terminal = async (invocation) => answer(invocation.args);
          } else {
            let cluster: ClusterInvoker | undefined;
            let directory: Directory | undefined;
            terminal = (invocation) => {
              if (released) {
                return Promise.reject(
                  new RpcError('Shutdown', `this reference to ${definition.name} was released`),
                );
              }
              if (cluster === undefined) {
                // Decided at the first call: the app may provide the service after refer().
                const inProcess = base.injvm && parts.inProcess.provides(def);
                const found = directoryFor(def, inProcess ? 'in-process' : targets!, announce);
                directory = found.directory;
                if (!held.has(found.key)) {
                  held.add(found.key);
                  holders.set(found.key, (holders.get(found.key) ?? 0) + 1);
                }
                cluster = clusterInvoker(
                  def,
                  name,
                  directory,
                  config,
                  methodOptions,
                  [...app.attempt, ...reference.attempt, ...own.attempt],
                  metrics,
                  ownClosers,
                );
              }
              const call = invocation as ClientInvocation;
              if (directory!.isReady) {
                const mocks = directory!.mocks;
                return mocks === undefined ? cluster(call) : switched(mocks.get(name), call);
              }
              return directory!.ready.then(() => switched(directory!.mocks?.get(name), call));
            };
            // An operator's mock switch for this method (runtime control), read per call.
            const switched = (switch_: MockMode | undefined, call: ClientInvocation) =>
              callWithMockSwitch(
                switch_,
                call,
                cluster as (i: Invocation) => Promise<unknown>,
                hasMock(options.mockImpl, name, declaration) ? mock() : undefined,
              );
          }
          const callFilters: NamedFilter<ClientInvocation>[] = [...app.call, ...reference.call, ...own.call];
          if (metrics !== undefined) callFilters.push(metricsCallFilter(metrics));
          if (parts.tracing) callFilters.push(tracingClientFilter());
          const limitStates = [
            ...(referenceLimits ? [referenceLimits] : []),
            ...(hasLimits(methodOptions.limits)
              ? [createConsumerLimitState(`${label}.methods.${name}`, methodOptions.limits!)]
              : []),
          ];
          if (limitStates.length > 0) callFilters.push(consumerLimitFilter(limitStates));
          const cache =
            methodOptions.cache === false ? undefined : (methodOptions.cache ?? declaration.cache);
          if (cache !== undefined) {
            callFilters.push(createResultCache(cache, (args) => serializer.encode(args)).filter);
          }
          if (mode === 'fail') {
            const answer = mock();
            callFilters.push(mockFallbackFilter((invocation) => answer(invocation.args)));
          }
          const callChain = compileChain(callFilters, terminal);
          const attemptNames =
            mode === 'force'
              ? []
              : orderFilters([
                  ...attemptBuiltins(`${definition.name}.${name}`, config, undefined, metrics),
                  ...app.attempt,
                  ...reference.attempt,
                  ...own.attempt,
                ]).map((filter) => filter.name);
          return {
            name,
            // a format with bodies per method (protobuf) gives this method's own
            route: new MethodRoute(
              definition,
              name,
              methodSerializer(serializer, definition, name, 'consumer'),
              extensions.get('compressor', config.compressor),
            ),
            timeoutMs: methodOptions.timeoutMs ?? declaration.timeoutMs ?? base.timeoutMs,
            oneway: methodOptions.oneway ?? declaration.oneway ?? false,
            idempotent,
            invoke: runCallChain(callChain),
            filters: { call: callChain.names, attempt: attemptNames },
          };
        },
      });
    },
    directories: () => directories,
    async close() {
      for (const close of closers.splice(0)) close();
      await pool.close();
      await Promise.all([...directories.values()].map((directory) => directory.close()));
      directories.clear();
      holders.clear();
    },
    destroy() {
      for (const close of closers.splice(0)) close();
      pool.destroy();
      for (const directory of directories.values()) void directory.close();
      directories.clear();
      holders.clear();
    },
  };
}
