/**
 * The composition root: configuration -> extensions -> provider and consumer sides -> lifecycle.
 * `callisto(options)` loads and validates configuration once; `start()` listens and registers;
 * `close()` shuts down gracefully (see shutdown.ts); `destroy()` stops at once.
 */

import { adminWanted } from '../admin/admin-options.js';
import { type AdminServer, createAdminServer } from '../admin/admin-server.js';
import { createConsumer } from '../consumer/consumer.js';
import { inheritsAnything } from '../consumer/hop-context.js';
import type { ReferenceOptions } from '../consumer/reference-options.js';
import type { FilterEntry } from '../core/filter.js';
import { createExtensionRegistry, type ExtensionRegistry } from '../extension/extension-registry.js';
import { createConsoleLogger, type Logger } from '../observability/logger.js';
import { createMetricsStore } from '../observability/metrics-store.js';
import { detachCallistoMetrics, type Registry } from '../observability/prometheus.js';
import { withServedCallFields } from '../observability/served-call-log.js';
import { activeTracer } from '../observability/tracing.js';
import { onPrimaryRequest } from '../provider/process-worker.js';
import type { ProvideOptions } from '../provider/provide-options.js';
import { createProvider } from '../provider/provider.js';
import { resolveProviderOptions } from '../provider/provider-options.js';
import { createRegistrySet } from '../registry/registry-set.js';
import { createCompressorTable } from '../serialization/compression/compressor-table.js';
import { createSerializerTable } from '../serialization/serializer-table.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Implementation, Remote } from '../service/service-types.js';
import { createAppObservability } from './app-observability.js';
import type { AppState } from './app-state.js';
import { builtinExtensions } from './builtin-extensions.js';
import { checkAppConfig } from './check-app-config.js';
import type { CallistoConfig, CallistoConfigInput } from './config/callisto-config.js';
import { type LoadConfigOptions, type LoadedConfig, loadConfigWithSources } from './config/load-config.js';
import { keepInternals } from './internals.js';
import { listeningLine } from './listening-line.js';
import { loadExtensionModules } from './load-extensions.js';
import { createSecuritySide } from './security-side.js';
import { gracefulShutdown } from './shutdown.js';

export interface AppOptions extends CallistoConfigInput {
  /** Where log lines go. Default: stderr at `logLevel`. */
  logger?: Logger;
  /** Filters for every provided service and every reference. */
  filters?: { provider?: FilterEntry[]; consumer?: FilterEntry[] };
  /** Register extensions in code before anything is built (overrides built-ins of the same name). */
  extend?: (extensions: ExtensionRegistry) => void;
  /** How configuration files and environment variables are read. */
  load?: LoadConfigOptions;
  /** A prom-client registry to register Callisto's metrics in (the app makes its own otherwise). */
  metricsRegistry?: Registry;
}

export interface CallistoApp {
  readonly config: CallistoConfig;
  readonly extensions: ExtensionRegistry;
  readonly logger: Logger;
  readonly state: AppState;
  /** True while running and not shutting down (for health checks). */
  readonly ready: boolean;
  /**
   * `host:port` announced to consumers (`<transport>://host:port` over a transport other than TCP, e.g.
   * `memory://127.0.0.1:1`), once started with something provided.
   */
  readonly address: string | undefined;
  /** The port listened on, once started. */
  readonly port: number | undefined;
  /** The HTTP/JSON entry's port (`server.http`, docs/http.md), once started with it configured. */
  readonly httpPort: number | undefined;
  /**
   * The gRPC entry's port (docs/grpc.md): the provider's own port unless `server.grpc.port` gives it one
   * of its own; once started with something provided; undefined with `server.grpc.enabled: false`.
   */
  readonly grpcPort: number | undefined;
  /** The admin endpoints' port, once started with `admin.enabled` or `admin.port`. */
  readonly adminPort: number | undefined;
  /** The prom-client registry holding the app's metrics (the one given as `metricsRegistry`, or its own). */
  readonly metricsRegistry: Registry;
  /** The Prometheus exposition text of the app's metrics registry (what the admin port's /metrics serves). */
  metrics(): Promise<string>;
  provide<T>(
    definition: ServiceDefinition<T>,
    implementation: Implementation<T>,
    options?: ProvideOptions<T>,
  ): this;
  refer<T>(definition: ServiceDefinition<T>, options?: ReferenceOptions<T>): Remote<T>;
  start(): Promise<this>;
  /** Graceful: unregister, tell consumers, drain, close. Idempotent. */
  close(): Promise<void>;
  /** Immediate: closes every socket now. */
  destroy(): void;
  /**
   * Closes gracefully on SIGTERM/SIGINT; the handlers are removed on close. On the primary of
   * `server.workers`, SIGHUP restarts the workers (`restartWorkers()`).
   */
  handleSignals(): this;
  /**
   * On the primary of `server.workers` > 1: replaces the worker processes one at a time, each new one
   * serving before the old one retires (it finishes what it runs; its consumers reconnect), so no call
   * fails. Rejects elsewhere.
   */
  restartWorkers(): Promise<void>;
  /** This process's worker number (1, 2, …) when it is a worker of `server.workers`, else undefined. */
  readonly worker: number | undefined;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Builds an app. Every configuration mistake (a bad value, an unknown key or a misspelt `CALLISTO_*`
 * variable, an extension name that is not registered, a bad registry address, a missing registry client
 * package) rejects here with a ConfigError, before anything is listened on or connected to. What loading
 * ignored (Kubernetes service links, other tools' `CALLISTO_*` variables) is logged once.
 */
export async function callisto(options: AppOptions = {}): Promise<CallistoApp> {
  const { logger: userLogger, filters, extend, load, metricsRegistry, ...input } = options;
  const loaded = loadConfigWithSources(input, load);
  const { config } = loaded;
  // a line written while a provider method runs names the served call (its callId and traceId)
  const logger = withServedCallFields(userLogger ?? createConsoleLogger(config.logLevel));
  // what loading ignored (Kubernetes service links, other tools' CALLISTO_* variables), said once
  for (const notice of loaded.notices) logger[notice.level](notice.message);
  const extensions = createExtensionRegistry(builtinExtensions);
  await loadExtensionModules(config.extensions, extensions, loaded.sourceOf('extensions'));
  extend?.(extensions);
  checkAppConfig(loaded, extensions);
  return createApp(loaded, extensions, logger, filters ?? {}, metricsRegistry);
}

function createApp(
  loaded: LoadedConfig,
  extensions: ExtensionRegistry,
  logger: Logger,
  filters: { provider?: FilterEntry[]; consumer?: FilterEntry[] },
  metricsRegistry: Registry | undefined,
): CallistoApp {
  const { config } = loaded;
  const serializers = createSerializerTable(extensions);
  const registries = createRegistrySet(extensions, config.registryTtlMs, logger);
  const store = createMetricsStore(config.application, config.statsWindowMs);
  const counted = config.metrics ? store : undefined;
  let admin: AdminServer | undefined;
  const security = createSecuritySide(config, extensions, logger);
  const serverTransport = security.serverTransport;
  const provider = createProvider({
    options: resolveProviderOptions(config, serverTransport, createCompressorTable(extensions)),
    transport: () => extensions.get('transport', serverTransport)(),
    serializers,
    registries,
    filters: filters.provider ?? [],
    logger,
    metrics: counted,
    // the tracing filters only where an SDK was registered first (as OpenTelemetry asks): free otherwise
    tracing: config.tracing && activeTracer() !== undefined,
    auth: security.serverAuth,
    admin: () => (admin ? { host: admin.host, port: admin.port } : undefined),
  });
  const consumer = createConsumer({
    config,
    extensions: security.consumerExtensions,
    serializers,
    registries,
    inProcess: provider.local,
    filters: filters.consumer ?? [],
    logger,
    metrics: counted,
  });
  const observability = createAppObservability({
    config,
    sourceOf: loaded.sourceOf,
    provider,
    consumer,
    registries,
    store,
    registry: metricsRegistry,
  });
  let state: AppState = 'created';
  let closing: Promise<void> | undefined;
  let signalHandler: (() => void) | undefined;
  let hangupHandler: (() => void) | undefined;
  /** Set when the primary of server.workers asked this worker to retire (the others go on). */
  let retiring = false;

  const removeSignals = () => {
    if (signalHandler) {
      process.off('SIGTERM', signalHandler);
      process.off('SIGINT', signalHandler);
      signalHandler = undefined;
    }
    if (hangupHandler) {
      process.off('SIGHUP', hangupHandler);
      hangupHandler = undefined;
    }
  };

  const app: CallistoApp = {
    config,
    extensions,
    logger,
    get state() {
      return state;
    },
    get ready() {
      return state === 'running';
    },
    get address() {
      return provider.advertisedAddress;
    },
    get port() {
      return provider.port;
    },
    worker: provider.worker,
    get httpPort() {
      return provider.httpPort;
    },
    get grpcPort() {
      return provider.grpcPort;
    },
    get adminPort() {
      return admin?.port;
    },
    metricsRegistry: observability.registry,
    metrics: () => observability.metricsText(),
    provide(definition, implementation, provideOptions) {
      if (state === 'stopping' || state === 'closed') throw new Error('cannot provide on a closed app');
      provider.provide(definition, implementation, provideOptions);
      return app;
    },
    refer(definition, referOptions) {
      if (state === 'stopping' || state === 'closed') throw new Error('cannot refer on a closed app');
      observability.referred(definition as ServiceDefinition<unknown>);
      const reference = consumer.refer(definition, referOptions);
      // calls the app's methods make after an await inherit from the call they serve (docs/cluster.md)
      if (inheritsAnything(config.consumer, referOptions)) provider.table.carryContext();
      return reference;
    },
    async start() {
      if (state !== 'created') throw new Error(`app already ${state}`);
      state = 'starting';
      if (config.handleSignals) app.handleSignals();
      try {
        if (adminWanted(config.admin)) {
          admin = createAdminServer(
            config.admin,
            observability.adminSource(() => ({ state, ready: app.ready })),
            { logger },
          );
          await admin.listen();
        }
        await provider.start();
      } catch (error) {
        state = 'running';
        await app.close();
        throw error;
      }
      state = 'running';
      const listening = listeningLine({
        application: config.application,
        rpc: provider.advertisedAddress,
        http: provider.httpPort === undefined ? undefined : `${config.server.http.host}:${provider.httpPort}`,
        admin: admin?.port === undefined ? undefined : `${config.admin.host}:${admin.port}`,
      });
      if (listening !== undefined) logger.info(listening);
      if (provider.worker !== undefined) {
        // a worker of server.workers leaves when its primary asks (rolling restart, or the cluster stops)
        onPrimaryRequest((kind) => {
          retiring = kind === 'retire';
          void app.close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        });
      }
      return app;
    },
    close() {
      closing ??= (async () => {
        state = 'stopping';
        try {
          await gracefulShutdown({
            provider,
            consumer,
            registries,
            logger,
            timeoutMs: config.shutdownTimeoutMs,
            retire: retiring,
          });
        } finally {
          removeSignals();
          state = 'closed';
          await admin?.close();
          if (metricsRegistry !== undefined) detachCallistoMetrics(store, metricsRegistry);
        }
      })();
      return closing;
    },
    destroy() {
      state = 'closed';
      closing ??= Promise.resolve();
      removeSignals();
      void admin?.close();
      if (metricsRegistry !== undefined) detachCallistoMetrics(store, metricsRegistry);
      consumer.destroy();
      provider.destroy();
      void registries.close();
    },
    handleSignals() {
      if (signalHandler) return app;
      signalHandler = () => {
        logger.info('signal received: shutting down gracefully');
        void app.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', signalHandler);
      process.once('SIGINT', signalHandler);
      if (config.server.workers !== 1 && provider.worker === undefined) {
        hangupHandler = () => {
          logger.info('SIGHUP: restarting the worker processes');
          app.restartWorkers().then(
            () => logger.info('worker processes restarted'),
            (error: Error) => logger.error(`restarting the worker processes failed: ${error.message}`),
          );
        };
        process.on('SIGHUP', hangupHandler);
      }
      return app;
    },
    restartWorkers: () => provider.restartWorkers(),
    [Symbol.asyncDispose]: () => app.close(),
  };
  keepInternals(app, { provider, consumer, registries });
  return app;
}
