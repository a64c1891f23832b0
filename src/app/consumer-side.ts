/**
 * The consumer side of an app, composed from its configuration: the consumer stack (src/consumer/) with
 * the app's extensions, serializers, registries, consumer filters and its own provider for in-process
 * calls.
 */
import type { CallistoConfig } from '../config/callisto-config.js';
import { type Consumer, createConsumer } from '../consumer/consumer.js';
import type { InProcessProvider } from '../consumer/in-process.js';
import type { FilterEntry } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../protocol/connection-options.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { SerializerTable } from '../serialization/serializer-table.js';

export type ConsumerSide = Consumer;

export function createConsumerSide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  serializers: SerializerTable,
  registries: RegistrySet,
  inProcess: InProcessProvider,
  filters: readonly FilterEntry[],
  logger: Logger,
): ConsumerSide {
  return createConsumer({
    settings: {
      application: config.application,
      registries: config.registry,
      startTimeoutMs: config.startTimeoutMs,
      consumer: config.consumer,
      connection: {
        ...DEFAULT_CONNECTION_OPTIONS,
        connectTimeoutMs: config.consumer.connectTimeoutMs,
        maxQueuedBytes: config.consumer.maxQueuedBytes,
        maxFrameBytes: config.server.maxFrameBytes,
        heartbeat: { intervalMs: config.heartbeatIntervalMs, missedLimit: 3 },
        compressThresholdBytes: config.compressThresholdBytes,
        maxInflateRatio: config.maxInflateRatio,
        maxDecodedElements: config.maxDecodedElements,
        frameTimeoutMs: config.frameTimeoutMs,
        maxPartialFrameBytes: config.maxPartialFrameBytes,
      },
    },
    extensions,
    serializers,
    registries,
    inProcess,
    filters,
    logger,
  });
}
