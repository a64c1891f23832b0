/**
 * The provider side of an app, composed from its configuration: the provider stack (src/provider/) with
 * the app's transport, serializers, registries and provider filters.
 */
import type { CallistoConfig } from '../config/callisto-config.js';
import type { FilterEntry } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../protocol/connection-options.js';
import { createProvider, type Provider } from '../provider/provider.js';
import type { ServerOptions } from '../provider/server-options.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { SerializerTable } from '../serialization/serializer-table.js';

export type { ProvideOptions } from '../provider/provider.js';
export type ProviderSide = Provider;

/** The server's options from the app's configuration. */
function serverOptionsOf(config: CallistoConfig): ServerOptions {
  const server = config.server;
  return {
    host: server.host,
    port: server.port,
    advertiseHost: server.advertiseHost || undefined,
    serializers: server.serializers.length > 0 ? server.serializers : undefined,
    maxConcurrentCalls: server.maxConcurrentCalls,
    exposeStack: server.exposeStack,
    exposeErrors: server.exposeErrors,
    writeHighWaterBytes: server.writeHighWaterBytes,
    maxConnections: server.maxConnections,
    maxConnectionsPerAddress: server.maxConnectionsPerAddress,
    connectionShare: server.connectionShare,
    addressShare: server.addressShare,
    maxElementsInFlight: server.maxElementsInFlight,
    connection: {
      ...DEFAULT_CONNECTION_OPTIONS,
      maxFrameBytes: server.maxFrameBytes,
      heartbeat: { intervalMs: config.heartbeatIntervalMs, missedLimit: 3 },
      compressThresholdBytes: config.compressThresholdBytes,
      maxInflateRatio: config.maxInflateRatio,
      maxDecodedElements: config.maxDecodedElements,
      frameTimeoutMs: config.frameTimeoutMs,
      maxPartialFrameBytes: config.maxPartialFrameBytes,
    },
  };
}

export function createProviderSide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  serializers: SerializerTable,
  registries: RegistrySet,
  filters: readonly FilterEntry[],
  logger: Logger,
): ProviderSide {
  return createProvider({
    options: {
      application: config.application,
      registries: config.registry,
      startTimeoutMs: config.startTimeoutMs,
      server: serverOptionsOf(config),
      transport: config.server.transport,
      weight: config.server.weight,
      tags: config.server.tags,
    },
    transport: () => extensions.get('transport', config.server.transport)(),
    serializers,
    registries,
    filters,
    logger,
  });
}
