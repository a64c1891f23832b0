/**
 * The provider half of an app: the service table, the TCP server (only when something is provided),
 * and the registrations. Shutdown steps are exposed one by one for the app's shutdown sequence.
 */
import type { CallistoConfig } from '../config/callisto-config.js';
import type { Filter } from '../core/invocation.js';
import { channels, type ProtocolErrorMessage } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import { acceptedSerializers, createRpcServer, type RpcServer } from '../server/rpc-server.js';
import { checkServerOptions, type ServerOptions } from '../server/server-options.js';
import { type ServiceDefinition, undeclaredFunctions } from '../service/define-service.js';
import { createServiceTable, type ExportedService, type ServiceTable } from '../service/service-table.js';
import type { Implementation } from '../service/service-types.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../transport/transport-options.js';
import { advertisedHostOf } from './advertise-host.js';
import type { RegistrySet } from './registry-set.js';

export interface ProvideOptions {
  /** Provider filters for this service, after the app's. */
  filters?: Filter[];
  /** Weight announced for this service. Default: server.weight. */
  weight?: number;
  /** Labels announced for this service, merged over server.tags. */
  tags?: Record<string, string>;
}

export interface ProviderSide {
  readonly table: ServiceTable;
  provide<T>(
    definition: ServiceDefinition<T>,
    implementation: Implementation<T>,
    options?: ProvideOptions,
  ): void;
  /** Listens (when anything is provided) and registers every service. */
  start(): Promise<void>;
  readonly server: RpcServer | undefined;
  /** `host:port` consumers are told, once started. */
  readonly advertisedAddress: string | undefined;
  records(): ProviderRecord[];
  unregisterAll(): Promise<void>;
}

interface Provided {
  exported: ExportedService;
  options: ProvideOptions;
  record?: ProviderRecord;
}

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
  serializers: SerializerTable,
  registries: RegistrySet,
  appFilters: readonly Filter[],
  logger: Logger,
): ProviderSide {
  const table = createServiceTable();
  const provided: Provided[] = [];
  let server: RpcServer | undefined;
  let advertisedHost: string | undefined;
  let started = false;
  const startTime = Date.now();
  const serverOptions = serverOptionsOf(config);
  const hostileLog = createRateLimitedLog((message) => logger.warn(message));

  const recordOf = (entry: Provided): ProviderRecord => {
    const { definition, methods } = entry.exported;
    return {
      service: definition.name,
      version: definition.version,
      group: definition.group,
      host: advertisedHost!,
      port: server!.port,
      protocol: 'callisto',
      serializers: acceptedSerializers(serializers.serializers, serverOptions.serializers).map((s) => s.name),
      weight: entry.options.weight ?? config.server.weight,
      methods: [...methods.keys()],
      application: config.application,
      pid: process.pid,
      startTime,
      tags: { ...config.server.tags, ...entry.options.tags },
    };
  };

  const register = async (entry: Provided): Promise<void> => {
    if (config.registry.length === 0) return;
    entry.record = recordOf(entry);
    await registries.register(config.registry, entry.record, config.startTimeoutMs);
    logger.info(
      `registered ${entry.record.service}:${entry.record.version} at ${entry.record.host}:${entry.record.port}`,
    );
  };

  return {
    table,
    provide(definition, implementation, options = {}) {
      const filters = [...appFilters, ...(options.filters ?? [])];
      const exported = table.add(definition as ServiceDefinition<unknown>, implementation as object, filters);
      const hidden = undeclaredFunctions(definition as ServiceDefinition<unknown>, implementation as object);
      if (hidden.length > 0) {
        logger.warn(
          `${definition.name}: ${hidden.join(', ')} not callable: only the methods its definition declares are (${[...exported.methods.keys()].join(', ')})`,
        );
      }
      const entry: Provided = { exported, options };
      provided.push(entry);
      if (started)
        void register(entry).catch((error: Error) => logger.error(`register failed: ${error.message}`));
    },
    async start() {
      if (provided.length === 0) return;
      // only an app that serves needs its server's limits to fit together (a consumer-only app may
      // raise maxDecodedElements for large answers)
      checkServerOptions(serverOptions);
      server = createRpcServer(table, serializers.serializers, serverOptions, {
        onProtocolError: (remote, error) => {
          const message = (error as Error).message;
          hostileLog.warn('protocol', `closed connection from ${remote}: ${message}`);
          if (channels.protocolError.hasSubscribers) {
            channels.protocolError.publish({
              remoteAddress: remote,
              message,
            } satisfies ProtocolErrorMessage);
          }
        },
        onRefused: (remote, reason) => hostileLog.warn('refused', `refused from ${remote}: ${reason}`),
        onScrubbed: (remote, label, ref, error) => {
          const fields = error as NodeJS.ErrnoException & { address?: string; port?: number };
          const where = [fields.code, fields.syscall, fields.path, fields.address, fields.port]
            .filter((part) => part !== undefined)
            .join(' ');
          logger.warn(
            `${label} failed for ${remote} with a system error the caller was not shown (ref ${ref}): ${error.message}${where ? ` [${where}]` : ''}`,
          );
        },
      });
      await server.listen();
      const advertised = advertisedHostOf(config.server);
      if (advertised.warning) logger.warn(advertised.warning);
      advertisedHost = advertised.host;
      started = true;
      await Promise.all(provided.map(register));
    },
    get server() {
      return server;
    },
    get advertisedAddress() {
      return server && advertisedHost ? `${advertisedHost}:${server.port}` : undefined;
    },
    records() {
      return provided.flatMap((entry) => (entry.record ? [entry.record] : []));
    },
    async unregisterAll() {
      if (config.registry.length === 0) return;
      const targets = await registries.get(config.registry).catch(() => []);
      await Promise.allSettled(
        provided.flatMap((entry) =>
          entry.record ? targets.map((registry) => registry.unregister(entry.record!)) : [],
        ),
      );
    },
  };
}
