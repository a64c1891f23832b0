/**
 * The consumer side of an app: the connection pool shared by every reference, one directory per
 * service and source of providers (directory-set.ts), and `refer()` (refer.ts), which builds each
 * method's path once (method-runtime.ts):
 *
 *   proxy -> per-call filters -> cluster strategy -> directory.select (balancer, health)
 *         -> per-attempt filters -> connection (or the in-process provider) -> frames
 *
 * The built-in filters of both positions and when each is in are one table, consumer-chain.ts. The
 * consumer reads its own keys of the app's configuration (consumer-settings.ts). See
 * docs/architecture.md.
 */
import type { FilterEntry } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { credentialsFilter } from '../filters/credentials.js';
import type { LogFields, Logger } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { createCompressorTable } from '../serialization/compression/compressor-table.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import { resolveClientTls } from '../transport/tls-options.js';
import type { ConnectionPool } from './connection-pool.js';
import type { ConsumerContext } from './consumer-context.js';
import { createConsumerPool } from './consumer-pool.js';
import { type ConsumerAppConfig, resolveConsumerSettings } from './consumer-settings.js';
import type { Directory } from './directory.js';
import { createDirectorySet } from './directory-set.js';
import { createInProcessTarget, type InProcessProvider } from './in-process.js';
import { createMockCatalog } from './mock-methods.js';
import { refer } from './refer.js';
import type { ReferenceOptions } from './reference-options.js';
import { userFilters } from './user-filters.js';

export type { ConsumerSettings } from './consumer-settings.js';
export { retryPolicyFor } from './method-cluster.js';

export interface ConsumerParts {
  /** The app's resolved configuration (the consumer reads its own keys of it). */
  readonly config: ConsumerAppConfig;
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

export function createConsumer(parts: ConsumerParts): Consumer {
  const { extensions, serializers, logger } = parts;
  const settings = resolveConsumerSettings(parts.config);
  const appFilters = userFilters(parts.filters, 'filters.consumer');
  const log = (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) =>
    logger[level](message, fields);
  let directories: ReturnType<typeof createDirectorySet> | undefined;
  const pool = createConsumerPool({
    extensions,
    serializers,
    connection: {
      ...settings.connection,
      // the app's compressors (its own `compressor` extensions too) read answers
      compressors: createCompressorTable(extensions),
      // suspicion at the first missed heartbeat, when the heartbeat is faster than suspectAfterMs
      suspectAfterMs: Math.min(settings.consumer.suspectAfterMs, settings.connection.heartbeat.intervalMs),
    },
    idleTimeoutMs: settings.consumer.idleTimeoutMs,
    httpTls: resolveClientTls(settings.consumer.tls),
    logger,
    onHeartbeatRtt: (address, rttMs, load) => {
      for (const directory of directories!.all.values()) directory.recordRtt(address, rttMs, load);
    },
  });
  const mocks = createMockCatalog();
  directories = createDirectorySet({
    settings,
    pool,
    registries: parts.registries,
    inProcessTarget: createInProcessTarget(parts.inProcess),
    mocks,
    logger,
  });
  const context: ConsumerContext = {
    settings,
    extensions,
    serializers,
    directories,
    inProcess: parts.inProcess,
    mocks,
    appFilters,
    credentials:
      settings.consumer.credentials === '' ? undefined : credentialsFilter(settings.consumer.credentials),
    metrics: parts.metrics,
    closers: new Set(),
    log,
  };
  const stopBackground = () => {
    for (const close of context.closers) close();
    context.closers.clear();
  };

  return {
    pool,
    refer: (definition, options) => refer(context, definition, options),
    directories: () => context.directories.all,
    async close() {
      stopBackground();
      await pool.close();
      await context.directories.close();
    },
    destroy() {
      stopBackground();
      pool.destroy();
      context.directories.destroy();
    },
  };
}
