/**
 * What the provider side reads of the app's configuration, resolved once: `resolveProviderOptions()`
 * takes the app's (validated) configuration as it is — the provider picks its own keys — and the
 * transport the app's security chose (`tls` when `server.tls` is set).
 */
import type { ProviderLimits } from '../governance/limit-options.js';
import type { ConnectionConfig } from '../protocol/connection-options.js';
import type { CompressorTable } from '../serialization/compression/compressor-table.js';
import { workerCount } from './process-cluster.js';
import { resolveServerOptions, type ServerConfig, type ServerOptions } from './server-options.js';

/** What the provider side is configured with (the app's configuration, resolved). */
export interface ProviderOptions {
  /** Announced to registries. */
  readonly application: string;
  /** Registry addresses to register in. */
  readonly registries: readonly string[];
  /** How long a registry may take to take a registration at start. */
  readonly startTimeoutMs: number;
  readonly server: ServerOptions;
  /** The name of the transport the server listens on (announced in records when not tcp). */
  readonly transport: string;
  /** Rate and concurrency limits of the whole app (`server.limits`, docs/governance.md). Default none. */
  readonly limits?: ProviderLimits | undefined;
  /** Weight and labels announced for every service unless it says otherwise. */
  readonly weight: number;
  readonly tags: Readonly<Record<string, string>>;
  /**
   * `server.workers` resolved: processes serving the port (1: this one). Above 1 this process is the
   * primary (process-cluster.ts) unless it is itself one of the workers.
   */
  readonly workers: number;
  /** How long a worker may take to leave once asked, before it is killed (the app's shutdown timeout). */
  readonly shutdownTimeoutMs: number;
  /** `server.accessLog`: services whose calls get one log line each ('*': all). */
  readonly accessLog: readonly string[];
  /** Whether `callContext()` is kept past a method's awaits (AsyncLocalStorage). */
  readonly asyncCallContext: boolean;
  /** `server.auth.registryToken`: a random token in the records, required on every call. */
  readonly registryToken: boolean;
}

/** The keys of the app's configuration the provider side reads. */
export interface ProviderConfig extends ConnectionConfig {
  readonly application: string;
  readonly registry: readonly string[];
  readonly startTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly asyncCallContext: boolean;
  readonly server: ServerConfig;
}

/**
 * The provider's options from the app's configuration; `transport` is what the server listens on,
 * `compressors` the app's (its own `compressor` extensions too), which read requests and write answers.
 */
export function resolveProviderOptions(
  config: ProviderConfig,
  transport: string,
  compressors?: CompressorTable,
): ProviderOptions {
  const { server } = config;
  const resolved = resolveServerOptions(server, config);
  return {
    application: config.application,
    registries: config.registry,
    startTimeoutMs: config.startTimeoutMs,
    server:
      compressors === undefined
        ? resolved
        : { ...resolved, connection: { ...resolved.connection, compressors } },
    transport,
    weight: server.weight,
    tags: server.zone === '' ? server.tags : { ...server.tags, zone: server.zone },
    workers: workerCount(server.workers),
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    limits: server.limits,
    accessLog: server.accessLog,
    asyncCallContext: config.asyncCallContext,
    registryToken: server.auth.registryToken,
  };
}
