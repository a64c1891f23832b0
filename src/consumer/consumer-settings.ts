/**
 * What the consumer stack reads of the app's resolved configuration, and the settings it makes of
 * them once: the consumer's options (the defaults of every reference), the connections' options (answers
 * held to the provider's frame limit, `server.maxFrameBytes`, on the consumer too), and whether calls
 * are traced.
 */
import { activeTracer } from '../observability/tracing.js';
import {
  type ConnectionConfig,
  type ConnectionOptions,
  resolveConnectionOptions,
} from '../protocol/connection-options.js';
import type { ConsumerConfig } from './consumer-options.js';

/** The keys of the app's configuration (`CallistoConfig`) the consumer stack reads: the connection keys and these. */
export type ConsumerAppConfig = ConnectionConfig & ConsumerKeys;

interface ConsumerKeys {
  /** Announced to registries in consumer records. */
  readonly application: string;
  /** The app's registry addresses (a reference may name its own). */
  readonly registry: readonly string[];
  /** How long a first discovery waits for a registry's list before the snapshot. */
  readonly startTimeoutMs: number;
  /** The app's consumer options, the defaults of every reference. */
  readonly consumer: ConsumerConfig;
  /** The frame limit, the same on both sides. */
  readonly server: { readonly maxFrameBytes: number; readonly zone?: string };
  /** Whether calls are traced (once an OpenTelemetry SDK is registered). */
  readonly tracing: boolean;
}

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
  /** Whether every call has the `tracing-client` filter (only where an SDK was registered first). */
  readonly tracing: boolean;
  /** The zone zone routing prefers (`consumer.zone`, else `server.zone`; '' none). */
  readonly zone: string;
}

export function resolveConsumerSettings(config: ConsumerAppConfig): ConsumerSettings {
  return {
    application: config.application,
    registries: config.registry,
    startTimeoutMs: config.startTimeoutMs,
    consumer: config.consumer,
    connection: resolveConnectionOptions(config, {
      maxFrameBytes: config.server.maxFrameBytes,
      connectTimeoutMs: config.consumer.connectTimeoutMs,
      maxQueuedBytes: config.consumer.maxQueuedBytes,
    }),
    // the tracing filters only where an SDK was registered first (as OpenTelemetry asks): free otherwise
    tracing: config.tracing && activeTracer() !== undefined,
    zone: config.consumer.zone || (config.server.zone ?? ''),
  };
}
