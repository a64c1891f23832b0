/**
 * The provider side of an app, composed from its configuration: the provider stack (src/provider/) with
 * the app's transport, serializers, registries and provider filters.
 */

import type { FilterEntry } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import { activeTracer } from '../observability/tracing.js';
import { workerCount } from '../provider/process-cluster.js';
import { createProvider, type Provider } from '../provider/provider.js';
import { resolveServerOptions } from '../provider/server-options.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { createCompressorTable } from '../serialization/compression/compressor-table.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { CallistoConfig } from './config/callisto-config.js';

export type { ProvideOptions } from '../provider/provide-options.js';
export type ProviderSide = Provider;

export function createProviderSide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  serializers: SerializerTable,
  registries: RegistrySet,
  filters: readonly FilterEntry[],
  logger: Logger,
  metrics?: MetricsStore,
  admin?: () => { host: string; port: number } | undefined,
  /** The transport to listen on (`tls` when server.tls is set). Default server.transport. */
  transport: string = config.server.transport,
): ProviderSide {
  const server = resolveServerOptions(config.server, config);
  return createProvider({
    options: {
      application: config.application,
      registries: config.registry,
      startTimeoutMs: config.startTimeoutMs,
      // the app's compressors (its own `compressor` extensions too) read requests and write answers
      server: {
        ...server,
        connection: { ...server.connection, compressors: createCompressorTable(extensions) },
      },
      transport,
      weight: config.server.weight,
      tags: config.server.tags,
      workers: workerCount(config.server.workers),
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      admin,
      limits: config.server.limits,
    },
    transport: () => extensions.get('transport', transport)(),
    serializers,
    registries,
    filters,
    logger,
    metrics,
    // the tracing filters only where an SDK was registered first (as OpenTelemetry asks): free otherwise
    tracing: config.tracing && activeTracer() !== undefined,
    asyncCallContext: config.asyncCallContext,
  });
}
