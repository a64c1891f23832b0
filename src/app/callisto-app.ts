/**
 * The composition root: configuration -> extensions -> provider and consumer sides -> lifecycle.
 * `callisto(options)` loads and validates configuration once; `start()` listens and registers;
 * `close()` shuts down gracefully (see shutdown.ts); `destroy()` stops at once.
 */
import type { CallistoConfig, CallistoConfigInput } from '../config/callisto-config.js';
import { type LoadConfigOptions, loadConfigWithSources } from '../config/load-config.js';
import type { ReferenceOptions } from '../consumer/reference-options.js';
import type { FilterEntry } from '../core/filter.js';
import { createExtensionRegistry, type ExtensionRegistry } from '../extension/extension-registry.js';
import { createConsoleLogger, type Logger } from '../observability/logger.js';
import type { ProvideOptions } from '../provider/provide-options.js';
import { createRegistrySet } from '../registry/registry-set.js';
import { createSerializerTable } from '../serialization/serializer-table.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Implementation, Remote } from '../service/service-types.js';
import type { AppState } from './app-state.js';
import { builtinExtensions } from './builtin-extensions.js';
import { checkAppConfig } from './check-app-config.js';
import { createConsumerSide } from './consumer-side.js';
import { keepInternals } from './internals.js';
import { loadExtensionModules } from './load-extensions.js';
import { createProviderSide } from './provider-side.js';
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
  /** Closes gracefully on SIGTERM/SIGINT; the handlers are removed on close. */
  handleSignals(): this;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Builds an app. Every configuration mistake (a bad value, an unknown key or `CALLISTO_*` variable, an
 * extension name that is not registered, a bad registry address, a missing registry client package)
 * rejects here with a ConfigError, before anything is listened on or connected to.
 */
export async function callisto(options: AppOptions = {}): Promise<CallistoApp> {
  const { logger: userLogger, filters, extend, load, ...input } = options;
  const loaded = loadConfigWithSources(input, load);
  const { config } = loaded;
  const extensions = createExtensionRegistry(builtinExtensions);
  await loadExtensionModules(config.extensions, extensions, loaded.sourceOf('extensions'));
  extend?.(extensions);
  checkAppConfig(loaded, extensions);
  return createApp(config, extensions, userLogger ?? createConsoleLogger(config.logLevel), filters ?? {});
}

function createApp(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  logger: Logger,
  filters: { provider?: FilterEntry[]; consumer?: FilterEntry[] },
): CallistoApp {
  const serializers = createSerializerTable(extensions);
  const registries = createRegistrySet(extensions, config.registryTtlMs, logger);
  const security = createSecuritySide(config, extensions, logger);
  const provider = createProviderSide(
    config,
    extensions,
    serializers,
    registries,
    [...security.providerFilters, ...(filters.provider ?? [])],
    logger,
    security.serverTransport,
  );
  const consumer = createConsumerSide(
    config,
    security.consumerExtensions,
    serializers,
    registries,
    provider.local,
    [...security.consumerFilters, ...(filters.consumer ?? [])],
    logger,
  );
  let state: AppState = 'created';
  let closing: Promise<void> | undefined;
  let signalHandler: (() => void) | undefined;

  const removeSignals = () => {
    if (signalHandler) {
      process.off('SIGTERM', signalHandler);
      process.off('SIGINT', signalHandler);
      signalHandler = undefined;
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
      return provider.server?.port;
    },
    provide(definition, implementation, provideOptions) {
      if (state === 'stopping' || state === 'closed') throw new Error('cannot provide on a closed app');
      provider.provide(definition, implementation, provideOptions);
      return app;
    },
    refer(definition, referOptions) {
      if (state === 'stopping' || state === 'closed') throw new Error('cannot refer on a closed app');
      return consumer.refer(definition, referOptions);
    },
    async start() {
      if (state !== 'created') throw new Error(`app already ${state}`);
      state = 'starting';
      if (config.handleSignals) app.handleSignals();
      try {
        await provider.start();
      } catch (error) {
        state = 'running';
        await app.close();
        throw error;
      }
      state = 'running';
      if (provider.advertisedAddress)
        logger.info(`${config.application} serving on ${provider.advertisedAddress}`);
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
          });
        } finally {
          removeSignals();
          state = 'closed';
        }
      })();
      return closing;
    },
    destroy() {
      state = 'closed';
      closing ??= Promise.resolve();
      removeSignals();
      consumer.destroy();
      provider.server?.destroy();
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
      return app;
    },
    [Symbol.asyncDispose]: () => app.close(),
  };
  keepInternals(app, { provider, consumer, registries });
  return app;
}
