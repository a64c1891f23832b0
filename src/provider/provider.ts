/**
 * The provider side of an app: the service table with each method's filter chain (provider-chain.ts),
 * the limits and shutdown state every call shares (from the wire, HTTP or in-process, all through
 * entry.ts), the server (only once something is provided and the app starts), the registrations
 * (registration.ts), and its own lifecycle: `shutdown(deadline)` (provider-shutdown.ts) and `destroy()`.
 */
import { randomBytes } from 'node:crypto';
import { ECHO_METHOD } from '../core/echo.js';
import { type FilterEntry, type NamedFilter, namedFilter } from '../core/filter.js';
import { type ConcurrencyLimiter, createConcurrencyLimiter } from '../governance/concurrency-limiter.js';
import { channels, type ProtocolErrorMessage } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ServerAuthOptions } from '../security/auth-options.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import { type ServiceDefinition, undeclaredFunctions } from '../service/define-service.js';
import type { Implementation } from '../service/service-types.js';
import { type Transport, transportAddress } from '../transport/transport.js';
import { advertisedHostOf } from './advertise-host.js';
import { checkProvideOptions } from './check-provide-options.js';
import type { WorkerPool } from './executor-pool.js';
import { createGrpcEntry, GRPC_ALPN, type GrpcEntry } from './grpc/grpc-entry.js';
import { GRPC_SAME_PORT } from './grpc/grpc-options.js';
import { createHttpEntry, type HttpEntry } from './http/http-entry.js';
import { createLoadReports } from './load-reports.js';
import { createLocalCalls, type LocalCalls } from './local-calls.js';
import { checkSharedTransport, createProcessCluster, type ProcessCluster } from './process-cluster.js';
import { reportReady, workerNumber, workerPort } from './process-worker.js';
import type { ProvideOptions } from './provide-options.js';
import { createProviderChain } from './provider-chain.js';
import { appLimits, createLimitFilters } from './provider-limits.js';
import type { ProviderOptions } from './provider-options.js';
import { type ProviderShutdownOptions, shutdownProvider } from './provider-shutdown.js';
import { createRegistration, type Registered, type ServedAt } from './registration.js';
import { callFields, scrubbedLine } from './scrubbed-log.js';
import { servedOf } from './served-on.js';
import { acceptedSerializers, createRpcServer, type RpcServer } from './server.js';
import { checkServerOptions } from './server-options.js';
import { createServiceExecutors } from './service-executors.js';
import { createServiceTable, type ServiceTable } from './service-table.js';
import { createServing } from './serving.js';

export type { ProvideOptions } from './provide-options.js';
export type { ProviderOptions } from './provider-options.js';

export interface ProviderParts {
  readonly options: ProviderOptions;
  /** The transport to listen on, created when the server starts. */
  readonly transport: () => Transport;
  readonly serializers: SerializerTable;
  readonly registries: RegistrySet;
  /** The app's own provider filters (`callisto({ filters.provider })`). */
  readonly filters: readonly FilterEntry[];
  readonly logger: Logger;
  /** Where the `metrics-server` filter counts (none: no metrics filter). */
  readonly metrics?: MetricsStore | undefined;
  /** Whether the `tracing-server` filter is in every method's chain. */
  readonly tracing?: boolean | undefined;
  /** `server.auth` resolved by the app's security: the `auth` and `access` filters. */
  readonly auth?: ServerAuthOptions | undefined;
  /** Where the app's admin endpoints are, as written in records (none when they are off). */
  readonly admin?: (() => { host: string; port: number } | undefined) | undefined;
}

export interface Provider {
  readonly table: ServiceTable;
  /** Serves the app's own consumers in-process, through the same filters. */
  readonly local: LocalCalls;
  provide<T>(
    definition: ServiceDefinition<T>,
    implementation: Implementation<T>,
    options?: ProvideOptions<T>,
  ): void;
  /** Listens (when anything is provided) and registers every service. */
  start(): Promise<void>;
  /** `host:port` consumers are told (`<transport>://host:port` unless over TCP), once started. */
  readonly advertisedAddress: string | undefined;
  /** The port served (by this process, or by the workers of `server.workers`), once started. */
  readonly port: number | undefined;
  /** The HTTP/JSON entry's port, once started with it configured. */
  readonly httpPort: number | undefined;
  /** The gRPC entry's port (the RPC port unless `server.grpc.port` gives it one), once started; undefined when off. */
  readonly grpcPort: number | undefined;
  /** Consumer connections open to the RPC server; undefined while it does not listen. */
  readonly connectionCount: number | undefined;
  /** This process's worker number under a primary of `server.workers`, else undefined. */
  readonly worker: number | undefined;
  /** The primary of `server.workers` > 1, once started: replaces its worker processes one at a time. */
  restartWorkers(): Promise<void>;
  records(): ProviderRecord[];
  /** The names of a method's filters, in running order (docs and tests). */
  filterNames(definition: ServiceDefinition<unknown>, method: string): readonly string[];
  /** Graceful, by `deadline` (epoch ms): provider-shutdown.ts. */
  shutdown(deadline: number, options?: ProviderShutdownOptions): Promise<void>;
  /** Immediate: closes every socket, thread and worker process now. */
  destroy(): void;
  /** For Callisto's tests and tools: the RPC server, once started. */
  readonly server: RpcServer | undefined;
  /** For Callisto's tests and tools: the worker pools of methods with a worker executor. */
  readonly executors: readonly WorkerPool[];
  /** The adaptive concurrency limit (`server.adaptiveLimit`), for the metrics and `/stats`; none: off. */
  readonly limiter: ConcurrencyLimiter | undefined;
}

interface Provided extends Registered {
  readonly options: ProvideOptions;
}

export function createProvider(parts: ProviderParts): Provider {
  const { options, serializers, logger } = parts;
  const serverOptions = options.server;
  const table = createServiceTable({ asyncContext: options.asyncCallContext });
  const serving = createServing({
    maxConnections: serverOptions.maxConnections,
    maxConnectionsPerAddress: serverOptions.maxConnectionsPerAddress,
    maxCalls: serverOptions.maxConcurrentCalls,
    maxElements: serverOptions.maxElementsInFlight,
    connectionShare: serverOptions.connectionShare,
    addressShare: serverOptions.addressShare,
  });
  const limiter =
    serverOptions.adaptiveLimit === undefined
      ? undefined
      : createConcurrencyLimiter(serverOptions.adaptiveLimit);
  const loadReports =
    serverOptions.loadReportMs > 0
      ? createLoadReports({
          periodMs: serverOptions.loadReportMs,
          read: () => ({
            inflight: limiter?.inflight ?? serving.limits.calls,
            limit: limiter?.limit ?? serverOptions.maxConcurrentCalls,
            queued: pools.reduce((sum, pool) => sum + pool.queued, 0),
            loopDelayMs: limiter?.loopDelayMs ?? 0,
            overloaded: limiter?.overloaded ?? false,
          }),
        })
      : undefined;
  // a new one at every start: a restarted provider's old token is worth nothing
  const registryToken = options.registryToken ? randomBytes(24).toString('base64url') : undefined;
  const builtinOf = createProviderChain({
    registryToken,
    serving,
    logger,
    accessLog: options.accessLog,
    auth: parts.auth,
    metrics: parts.metrics,
    tracing: parts.tracing === true,
    deadlineAdmission: serverOptions.deadlineAdmission,
    limiter,
  });
  const forApp = appLimits(options.limits);
  const appFilters = parts.filters.map((entry) =>
    namedFilter(entry, 'provider', 'callisto({ filters.provider })'),
  );
  const registration = createRegistration({
    options,
    token: registryToken,
    registries: parts.registries,
    serializers: () =>
      acceptedSerializers(serializers.serializers, serverOptions.serializers).map((s) => s.name),
    logger,
  });
  const provided: Provided[] = [];
  const pools: WorkerPool[] = [];
  const worker = workerNumber();
  const primary = worker === undefined && options.workers > 1;
  if (primary) checkSharedTransport(options.workers, options.transport);
  let processes: ProcessCluster | undefined;
  let clusterPort: number | undefined;
  let server: RpcServer | undefined;
  let http: HttpEntry | undefined;
  let grpc: GrpcEntry | undefined;
  let advertisedHost: string | undefined;
  let started = false;
  const hostileLog = createRateLimitedLog((message) => logger.warn(message));

  const localCalls = createLocalCalls({
    table,
    serving,
    options: {
      exposeStack: serverOptions.exposeStack,
      exposeErrors: serverOptions.exposeErrors,
      onScrubbed: (scrubbed) =>
        logger.warn(scrubbedLine(scrubbed, 'in-process'), callFields({ ...scrubbed, remote: 'injvm' })),
    },
  });
  // the primary of server.workers serves nothing, in-process calls included: its consumers call the workers
  const local: LocalCalls = primary ? { provides: () => false, serve: localCalls.serve } : localCalls;

  /** Where this provider is reached, as its records say. */
  const servedAt = (): ServedAt => {
    const admin = parts.admin?.();
    const wildcard = admin !== undefined && (admin.host === '0.0.0.0' || admin.host === '::');
    return {
      host: advertisedHost!,
      port: server?.port ?? clusterPort!,
      httpPort: http?.port,
      // the admin endpoints as other hosts reach them: the bound host, or the advertised one for a wildcard
      admin:
        admin === undefined ? undefined : { host: wildcard ? advertisedHost! : admin.host, port: admin.port },
      workers: primary ? options.workers : undefined,
    };
  };
  const register = (entry: Provided): Promise<void> => registration.register(entry, servedAt());

  const listen = async (): Promise<void> => {
    // worker threads load their modules before the port opens: a wrong module fails the start
    await Promise.all(pools.map((pool) => pool.start()));
    const transport = parts.transport();
    const grpcOptions = serverOptions.grpc;
    if (grpcOptions !== undefined) {
      grpc = createGrpcEntry({
        table,
        serving,
        json: serializers.byName('json'),
        options: grpcOptions,
        decodeLimits: { maxElements: serverOptions.connection.maxDecodedElements },
        exposeStack: serverOptions.exposeStack,
        exposeErrors: serverOptions.exposeErrors,
        onRefused: (remote, reason) => hostileLog.warn('refused', `refused from ${remote}: ${reason}`),
        onProtocolError: (remote, reason) => {
          hostileLog.warn('protocol', `closed connection from ${remote}: ${reason}`);
          if (channels.protocolError.hasSubscribers) {
            channels.protocolError.publish({
              remoteAddress: remote,
              message: reason,
            } satisfies ProtocolErrorMessage);
          }
        },
        onScrubbed: (scrubbed) =>
          logger.warn(scrubbedLine(scrubbed, `for ${scrubbed.remote}`), callFields(scrubbed)),
        logger,
      });
    }
    const sharedGrpc = grpc !== undefined && grpcOptions?.port === GRPC_SAME_PORT ? grpc : undefined;
    server = createRpcServer({
      transport,
      http2: sharedGrpc && { alpnProtocols: [GRPC_ALPN], serve: sharedGrpc.serve },
      table,
      serializers: serializers.serializers,
      options:
        worker === undefined ? serverOptions : { ...serverOptions, port: workerPort() ?? serverOptions.port },
      serving,
      loadReports,
      hooks: {
        onProtocolError: (remote, error) => {
          const message = (error as Error).message;
          hostileLog.warn('protocol', `closed connection from ${remote}: ${message}`);
          if (channels.protocolError.hasSubscribers) {
            channels.protocolError.publish({ remoteAddress: remote, message } satisfies ProtocolErrorMessage);
          }
        },
        onRefused: (remote, reason) => hostileLog.warn('refused', `refused from ${remote}: ${reason}`),
        onScrubbed: (scrubbed) =>
          logger.warn(scrubbedLine(scrubbed, `for ${scrubbed.remote}`), callFields(scrubbed)),
      },
    });
    await server.listen();
    if (grpc !== undefined && sharedGrpc === undefined) await grpc.listen(transport);
    grpc?.health.ready();
    if (serverOptions.http === undefined) return;
    http = createHttpEntry({
      table,
      serving,
      json: serializers.byName('json'),
      options: serverOptions.http,
      decodeLimits: { maxElements: serverOptions.connection.maxDecodedElements },
      exposeStack: serverOptions.exposeStack,
      exposeErrors: serverOptions.exposeErrors,
      onRefused: (remote, reason) => hostileLog.warn('refused', `refused from ${remote}: ${reason}`),
      onScrubbed: (scrubbed) => logger.warn(scrubbedLine(scrubbed, `for ${scrubbed.remote}`)),
      logger,
      authenticators: parts.auth?.authenticators.map((authenticator) => authenticator.name),
    });
    await http.listen();
  };

  return {
    table,
    local,
    provide(definition, implementation, provideOptions = {}) {
      const where = `provide(${definition.name})`;
      checkProvideOptions(definition.name, provideOptions);
      const serviceFilters = (provideOptions.filters ?? []).map((entry) =>
        namedFilter(entry, 'provider', `${where}.filters`),
      );
      const methodFilters = new Map<string, NamedFilter[]>();
      for (const [method, methodOptions] of Object.entries(provideOptions.methods ?? {})) {
        const entries = (methodOptions as { filters?: FilterEntry[] } | undefined)?.filters ?? [];
        methodFilters.set(
          method,
          entries.map((entry) => namedFilter(entry, 'provider', `${where}.methods.${method}.filters`)),
        );
      }
      const service = definition as ServiceDefinition<unknown>;
      const executors = createServiceExecutors({
        definition: service,
        options: provideOptions as ProvideOptions,
        where,
        logger,
      });
      const limitsOf = createLimitFilters(definition.name, provideOptions as ProvideOptions, where, forApp);
      const served = servedOf(provideOptions as ProvideOptions, {
        service: definition.name,
        appRegistries: options.registries,
        http: serverOptions.http !== undefined,
        grpc: serverOptions.grpc !== undefined,
      });
      const metered = provideOptions.metrics !== false;
      const exported = table.add(
        service,
        implementation as object,
        (method) => [
          // the echo is not counted: it is no call of the service's
          ...builtinOf({ definition: service, method, metrics: metered && method !== ECHO_METHOD }),
          ...limitsOf(method),
          ...appFilters,
          ...serviceFilters,
          ...(methodFilters.get(method) ?? []),
        ],
        executors.terminalOf,
        served.on,
      );
      const hidden = undeclaredFunctions(service, implementation as object);
      if (hidden.length > 0) {
        logger.warn(
          `${definition.name}: ${hidden.join(', ')} not callable: only the methods its definition declares are (${[...exported.methods.keys()].join(', ')})`,
        );
      }
      const unknown = [...methodFilters.keys()].filter((method) => !exported.methods.has(method));
      if (unknown.length > 0) {
        table.remove(service);
        throw new TypeError(`${where}.methods: ${unknown.join(', ')} is not a method of ${definition.name}`);
      }
      const entry: Provided = {
        exported,
        options: provideOptions as ProvideOptions,
        weight: provideOptions.weight,
        tags: provideOptions.tags,
        registries: served.registries,
        protocols: served.protocols,
      };
      provided.push(entry);
      pools.push(...executors.pools);
      if (!started) return;
      for (const pool of executors.pools) {
        pool.start().catch((error: Error) => logger.error(error.message));
      }
      void register(entry).catch((error: Error) => logger.error(`register failed: ${error.message}`));
    },
    async start() {
      if (provided.length === 0) return;
      // only an app that serves needs its server's limits to fit together (a consumer-only app may
      // raise maxDecodedElements for large answers)
      checkServerOptions(serverOptions);
      const advertised = advertisedHostOf(serverOptions);
      // workers of server.workers register nothing: their primary says it once
      if (advertised.warning && worker === undefined) logger.warn(advertised.warning);
      if (primary) {
        // the workers serve; this process picks the port, watches them and registers one address
        processes = createProcessCluster({
          count: options.workers,
          host: serverOptions.host,
          port: serverOptions.port,
          startTimeoutMs: options.startTimeoutMs + 30_000,
          stopTimeoutMs: options.shutdownTimeoutMs + 5_000,
          logger,
        });
        clusterPort = await processes.start();
        advertisedHost = advertised.host;
        started = true;
        logger.info(`${options.workers} worker processes serve port ${clusterPort}`);
        await Promise.all(provided.map(register));
        return;
      }
      await listen();
      advertisedHost = advertised.host;
      started = true;
      // a worker of server.workers does not register: its primary registers the one address
      if (worker === undefined) await Promise.all(provided.map(register));
      else reportReady(server!.port);
    },
    get advertisedAddress() {
      const port = server?.port ?? clusterPort;
      return port !== undefined && advertisedHost
        ? transportAddress(advertisedHost, port, options.transport)
        : undefined;
    },
    get port() {
      return server?.port ?? clusterPort;
    },
    get httpPort() {
      return http?.port;
    },
    get grpcPort() {
      if (grpc === undefined) return undefined;
      return grpc.port ?? server?.port;
    },
    get connectionCount() {
      return server?.connectionCount;
    },
    worker,
    async restartWorkers() {
      if (processes === undefined) {
        throw new Error(
          'restartWorkers() restarts the worker processes of server.workers > 1, on their primary, once started',
        );
      }
      await processes.restart();
    },
    records: () => registration.records(),
    filterNames(definition, method) {
      const exported = table.lookup(definition.name, definition.version, definition.group);
      return exported?.methods.get(method)?.chain.names ?? [];
    },
    shutdown(deadline, shutdownOptions) {
      return shutdownProvider(
        { registration, processes, server, http, grpc, pools, logger },
        deadline,
        shutdownOptions,
      ).finally(() => limiter?.close());
    },
    destroy() {
      limiter?.close();
      server?.destroy();
      for (const pool of pools) pool.destroy();
      processes?.destroy();
      http?.destroy();
      grpc?.destroy();
    },
    get server() {
      return server;
    },
    executors: pools,
    limiter,
  };
}
