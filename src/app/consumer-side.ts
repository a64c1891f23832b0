/**
 * The consumer side of an app, composed from its configuration: the consumer stack (src/consumer/) with
 * the app's extensions, serializers, registries, consumer filters and its own provider for in-process
 * calls.
 */

import { type Consumer, createConsumer } from '../consumer/consumer.js';
import type { InProcessProvider } from '../consumer/in-process.js';
import type { FilterEntry } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import { activeTracer } from '../observability/tracing.js';
import { resolveConnectionOptions } from '../protocol/connection-options.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { createCompressorTable } from '../serialization/compression/compressor-table.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { CallistoConfig } from './config/callisto-config.js';

export type ConsumerSide = Consumer;

export function createConsumerSide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  serializers: SerializerTable,
  registries: RegistrySet,
  inProcess: InProcessProvider,
  filters: readonly FilterEntry[],
  logger: Logger,
  metrics?: MetricsStore,
): ConsumerSide {
  return createConsumer({
    settings: {
      application: config.application,
      registries: config.registry,
      startTimeoutMs: config.startTimeoutMs,
      consumer: config.consumer,
      // Answers are held to the provider's frame limit (`server.maxFrameBytes`) on the consumer too.
      connection: {
        ...resolveConnectionOptions(config, {
          maxFrameBytes: config.server.maxFrameBytes,
          connectTimeoutMs: config.consumer.connectTimeoutMs,
          maxQueuedBytes: config.consumer.maxQueuedBytes,
        }),
        // the app's compressors (its own `compressor` extensions too) read answers
        compressors: createCompressorTable(extensions),
      },
    },
    extensions,
    serializers,
    registries,
    inProcess,
    filters,
    logger,
    metrics,
    // the tracing filters only where an SDK was registered first (as OpenTelemetry asks): free otherwise
    tracing: config.tracing && activeTracer() !== undefined,
  });
}
