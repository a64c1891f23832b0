export type { ProvideOptions } from './provide-options.js';

/**
 * The provider side of an app: the service table with each method's filter chain, the limits and
 * shutdown state every call shares (from the wire or in-process), the server (only once something is
 * provided and the app starts), and the registrations. Shutdown steps are exposed one by one for the
 * app's shutdown sequence.
 *
 * Every provided method's chain, outermost first: `shutdown`, `deadline`, `admission`, `decode`,
 * `observe` (Callisto's, docs/filters.md), then the app's filters, the service's, the method's (each at
 * order 500 unless they say otherwise), then `validation` when the method declares a schema.
 */
import { parseConfig } from '../core/describe-schema.js';
import { type FilterEntry, type NamedFilter, namedFilter } from '../core/filter.js';
import { admissionFilter } from '../filters/admission.js';
import { providerDeadlineFilter } from '../filters/deadline.js';
import { decodeArgumentsFilter } from '../filters/decode-arguments.js';
import { executesFilter } from '../filters/executes.js';
import { leakyRateFilter } from '../filters/leaky-rate.js';
import { metricsServerFilter } from '../filters/metrics-server.js';
import { observeServerFilter } from '../filters/observe-server.js';
import { rateLimitFilter } from '../filters/rate-limit.js';
import { shutdownFilter } from '../filters/shutdown.js';
import { tracingServerFilter } from '../filters/tracing-server.js';
import { type ProviderLimits, providerLimitsSchema } from '../governance/limit-options.js';
import {
  createExecutionLimit,
  createLeakyLimiters,
  createRateLimiters,
  type ExecutionLimit,
  type LeakyLimiter,
  type RateLimiter,
} from '../governance/provider-limiters.js';
import { channels, type ProtocolErrorMessage } from '../observability/channels.js';
import { type LogFields, type Logger, traceIdOf } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import { type ServiceDefinition, undeclaredFunctions } from '../service/define-service.js';
import type { Implementation } from '../service/service-types.js';
import { type Transport, transportAddress } from '../transport/transport.js';
import { advertisedHostOf } from './advertise-host.js';
import { checkProvideOptions } from './check-provide-options.js';
import { type ResolvedWorkerExecutor, resolveExecutor } from './executor-options.js';
import { createWorkerPool, type WorkerPool } from './executor-pool.js';
import { workerStep } from './executor-step.js';
import { createHttpEntry, type HttpEntry } from './http/http-entry.js';
import { createLocalCalls, type LocalCalls } from './local-calls.js';
import { checkSharedTransport, createProcessCluster, type ProcessCluster } from './process-cluster.js';
import { reportReady, workerNumber, workerPort } from './process-worker.js';
import type { ProvideOptions } from './provide-options.js';
import { acceptedSerializers, createRpcServer, type RpcServer } from './server.js';
import type { ServerInvocation } from './server-invocation.js';
import { checkServerOptions, type ServerOptions } from './server-options.js';
import { createServiceTable, type ExportedService, type ServiceTable } from './service-table.js';
import { createServing } from './serving.js';

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
  readonly limits?: ProviderLimits;
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
  /** Where the app's admin endpoints are, as written in records (none when they are off). */
  readonly admin?: (() => { host: string; port: number } | undefined) | undefined;
}

export interface ProviderParts {
  readonly options: ProviderOptions;
  /** The transport to listen on, created when the server starts. */
  readonly transport: () => Transport;
  readonly serializers: SerializerTable;
  readonly registries: RegistrySet;
  /** The app's provider filters. */
  readonly filters: readonly FilterEntry[];
  readonly logger: Logger;
  /** Where the `metrics-server` filter counts (none: no metrics filter). */
  readonly metrics?: MetricsStore | undefined;
  /** Whether the `tracing-server` filter is in every method's chain (it does nothing while no SDK is registered). */
  readonly tracing?: boolean | undefined;
  /** Whether `callContext()` is kept past a method's awaits (AsyncLocalStorage). */
  readonly asyncCallContext?: boolean | undefined;
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
  readonly server: RpcServer | undefined;
  /** The HTTP/JSON entry (`server.http`), once started with it configured. */
  readonly http: HttpEntry | undefined;
  /** `host:port` consumers are told (`<transport>://host:port` unless over TCP), once started. */
  readonly advertisedAddress: string | undefined;
  records(): ProviderRecord[];
  unregisterAll(): Promise<void>;
  /** The names of a method's filters, in running order (docs and tests). */
  filterNames(definition: ServiceDefinition<unknown>, method: string): readonly string[];
  /** The worker pools of methods with a worker executor (executor-pool.ts). */
  readonly executors: readonly WorkerPool[];
  /** Waits for the worker threads to finish what they run (at most `timeoutMs`), then stops them. */
  closeExecutors(timeoutMs: number): Promise<void>;
  /** Stops the worker threads now. */
  destroyExecutors(): void;
  /** The port served (by this process, or by the workers of `server.workers`), once started. */
  readonly port: number | undefined;
  /** On the primary of `server.workers` > 1, once started: the worker processes. */
  readonly processes: ProcessCluster | undefined;
  /** This process's worker number under a primary of `server.workers`, else undefined. */
  readonly worker: number | undefined;
}

interface Provided {
  exported: ExportedService;
  options: ProvideOptions;
  record?: ProviderRecord;
}

export function createProvider(parts: ProviderParts): Provider {
  const { options, serializers, registries, logger } = parts;
  const serverOptions = options.server;
  const table = createServiceTable({ asyncContext: parts.asyncCallContext ?? false });
  const serving = createServing({
    maxConnections: serverOptions.maxConnections,
    maxConnectionsPerAddress: serverOptions.maxConnectionsPerAddress,
    maxCalls: serverOptions.maxConcurrentCalls,
    maxElements: serverOptions.maxElementsInFlight,
    connectionShare: serverOptions.connectionShare,
    addressShare: serverOptions.addressShare,
  });
  /** Callisto's own provider filters, the same for every method. */
  const builtin: readonly NamedFilter<ServerInvocation>[] = [
    shutdownFilter(serving),
    providerDeadlineFilter(),
    admissionFilter(),
    decodeArgumentsFilter(),
    observeServerFilter(),
    ...(parts.tracing ? [tracingServerFilter] : []),
  ];
  const appLimits = {
    rate: createRateLimiters(options.limits, 'app'),
    leaky: createLeakyLimiters(options.limits, 'app'),
    executes: createExecutionLimit(options.limits, 'app'),
  };
  const appFilters = parts.filters.map((entry) =>
    namedFilter(entry, 'provider', 'callisto({ filters.provider })'),
  );
  const provided: Provided[] = [];
  const pools: WorkerPool[] = [];
  const worker = workerNumber();
  const primary = worker === undefined && options.workers > 1;
  if (primary) checkSharedTransport(options.workers, options.transport);
  let processes: ProcessCluster | undefined;
  let clusterPort: number | undefined;
  let server: RpcServer | undefined;
  let http: HttpEntry | undefined;
  let advertisedHost: string | undefined;
  let started = false;
  const startTime = Date.now();
  const hostileLog = createRateLimitedLog((message) => logger.warn(message));

  const scrubbedLine = (label: string, who: string, ref: string, error: Error): string => {
    const fields = error as Error & {
      code?: string;
      syscall?: string;
      path?: string;
      address?: string;
      port?: number;
    };
    const where = [fields.code, fields.syscall, fields.path, fields.address, fields.port]
      .filter((part) => part !== undefined)
      .join(' ');
    return `${label} failed ${who} with a system error the caller was not shown (ref ${ref}): ${error.message}${where ? ` [${where}]` : ''}`;
  };

  /** The fields of a line about one call: its method, caller, reference and trace id. */
  const callFields = (
    label: string,
    remote: string,
    ref: string,
    attachments: Readonly<Record<string, string>> | undefined,
  ): LogFields => ({ call: label, remote, ref, traceId: traceIdOf(attachments) });

  const localCalls = createLocalCalls(table, serving, {
    exposeStack: serverOptions.exposeStack,
    exposeErrors: serverOptions.exposeErrors,
    onScrubbed: (label, ref, error, attachments) =>
      logger.warn(
        scrubbedLine(label, 'in-process', ref, error),
        callFields(label, 'injvm', ref, attachments),
      ),
  });
  // the primary of server.workers serves nothing, in-process calls included: its consumers call the workers
  const local: LocalCalls = primary ? { provides: () => false, serve: localCalls.serve } : localCalls;

  /** The admin endpoints as other hosts reach them: the bound host, or the advertised one for a wildcard. */
  const adminOf = (): { admin?: { host: string; port: number } } => {
    const admin = options.admin?.();
    if (admin === undefined) return {};
    const wildcard = admin.host === '0.0.0.0' || admin.host === '::';
    return { admin: { host: wildcard ? advertisedHost! : admin.host, port: admin.port } };
  };

  const recordOf = (entry: Provided): ProviderRecord => {
    const { definition, methods } = entry.exported;
    return {
      service: definition.name,
      version: definition.version,
      group: definition.group,
      host: advertisedHost!,
      port: server?.port ?? clusterPort!,
      protocol: 'callisto',
      ...(options.transport === 'tcp' ? {} : { transport: options.transport }),
      ...(http === undefined ? {} : { http: { port: http.port } }),
      ...(options.transport === 'tls' ? { tls: true as const } : {}),
      serializers: acceptedSerializers(serializers.serializers, serverOptions.serializers).map((s) => s.name),
      weight: entry.options.weight ?? options.weight,
      methods: [...methods.keys()],
      application: options.application,
      pid: process.pid,
      startTime,
      tags: {
        ...options.tags,
        ...entry.options.tags,
        ...(primary ? { workers: String(options.workers) } : {}),
      },
      ...adminOf(),
    };
  };

  const register = async (entry: Provided): Promise<void> => {
    if (options.registries.length === 0) return;
    entry.record = recordOf(entry);
    await registries.register(options.registries, entry.record, options.startTimeoutMs);
    logger.info(
      `registered ${entry.record.service}:${entry.record.version} at ${entry.record.host}:${entry.record.port}`,
    );
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
      const serviceExecutor = resolveExecutor(provideOptions.executor, `${where}.executor`);
      const methodExecutors = new Map<string, ResolvedWorkerExecutor | undefined>();
      for (const [method, methodOptions] of Object.entries(provideOptions.methods ?? {})) {
        const option = (methodOptions as { executor?: unknown } | undefined)?.executor;
        if (option !== undefined)
          methodExecutors.set(method, resolveExecutor(option, `${where}.methods.${method}.executor`));
      }
      /** One pool for the service's worker methods, one per method that names its own. */
      const servicePool: { pool?: WorkerPool; methods: string[] } = { methods: [] };
      const newPools: WorkerPool[] = [];
      const poolFor = (spec: ResolvedWorkerExecutor, methods: string[]): WorkerPool => {
        const pool = createWorkerPool(spec, definition.name, methods, (message) => logger.error(message));
        newPools.push(pool);
        return pool;
      };
      const terminalOf = (method: string, label: string) => {
        const spec = methodExecutors.has(method) ? methodExecutors.get(method) : serviceExecutor;
        if (spec === undefined) return undefined;
        let pool: WorkerPool;
        if (spec === serviceExecutor) {
          servicePool.pool ??= poolFor(spec, servicePool.methods);
          servicePool.methods.push(method);
          pool = servicePool.pool;
        } else pool = poolFor(spec, [method]);
        return workerStep(pool, label, definition.errors);
      };
      const limitsOf = createLimitFilters(definition.name, provideOptions, where, appLimits);
      const exported = table.add(
        definition as ServiceDefinition<unknown>,
        implementation as object,
        (method) => [
          ...builtin,
          ...(parts.metrics
            ? [metricsServerFilter(parts.metrics.method('provider', definition, method))]
            : []),
          ...limitsOf(method),
          ...appFilters,
          ...serviceFilters,
          ...(methodFilters.get(method) ?? []),
        ],
        terminalOf,
      );
      const hidden = undeclaredFunctions(definition as ServiceDefinition<unknown>, implementation as object);
      if (hidden.length > 0) {
        logger.warn(
          `${definition.name}: ${hidden.join(', ')} not callable: only the methods its definition declares are (${[...exported.methods.keys()].join(', ')})`,
        );
      }
      const unknown = [...methodFilters.keys()].filter((method) => !exported.methods.has(method));
      if (unknown.length > 0) {
        table.remove(definition as ServiceDefinition<unknown>);
        throw new TypeError(`${where}.methods: ${unknown.join(', ')} is not a method of ${definition.name}`);
      }
      const entry: Provided = { exported, options: provideOptions as ProvideOptions };
      provided.push(entry);
      pools.push(...newPools);
      if (started) {
        for (const pool of newPools) {
          pool.start().catch((error: Error) => logger.error(error.message));
        }
      }
      if (started)
        void register(entry).catch((error: Error) => logger.error(`register failed: ${error.message}`));
    },
    async start() {
      if (provided.length === 0) return;
      // only an app that serves needs its server's limits to fit together (a consumer-only app may
      // raise maxDecodedElements for large answers)
      checkServerOptions(serverOptions);
      const host = serverOptions.host;
      const advertised = advertisedHostOf(serverOptions);
      // workers of server.workers register nothing: their primary says it once
      if (advertised.warning && worker === undefined) logger.warn(advertised.warning);
      const advertise = advertised.host;
      if (primary) {
        // the workers serve; this process picks the port, watches them and registers one address
        processes = createProcessCluster({
          count: options.workers,
          host,
          port: serverOptions.port,
          startTimeoutMs: options.startTimeoutMs + 30_000,
          stopTimeoutMs: options.shutdownTimeoutMs + 5_000,
          logger,
        });
        clusterPort = await processes.start();
        advertisedHost = advertise;
        started = true;
        logger.info(`${options.workers} worker processes serve port ${clusterPort}`);
        await Promise.all(provided.map(register));
        return;
      }
      // worker threads load their modules before the port opens: a wrong module fails the start
      await Promise.all(pools.map((pool) => pool.start()));
      server = createRpcServer({
        transport: parts.transport(),
        table,
        serializers: serializers.serializers,
        options:
          worker === undefined
            ? serverOptions
            : { ...serverOptions, port: workerPort() ?? serverOptions.port },
        serving,
        hooks: {
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
          onScrubbed: (remote, label, ref, error, attachments) =>
            logger.warn(
              scrubbedLine(label, `for ${remote}`, ref, error),
              callFields(label, remote, ref, attachments),
            ),
        },
      });
      await server.listen();
      if (serverOptions.http !== undefined) {
        http = createHttpEntry({
          table,
          serving,
          json: serializers.byName('json'),
          options: serverOptions.http,
          decodeLimits: { maxElements: serverOptions.connection.maxDecodedElements },
          exposeStack: serverOptions.exposeStack,
          exposeErrors: serverOptions.exposeErrors,
          onRefused: (remote, reason) => hostileLog.warn('refused', `refused from ${remote}: ${reason}`),
          onScrubbed: (remote, label, ref, error) =>
            logger.warn(scrubbedLine(label, `for ${remote}`, ref, error)),
          logger,
        });
        await http.listen();
      }
      advertisedHost = advertise;
      started = true;
      // a worker of server.workers does not register: its primary registers the one address
      if (worker === undefined) await Promise.all(provided.map(register));
      else reportReady(server.port);
    },
    get server() {
      return server;
    },
    get http() {
      return http;
    },
    get advertisedAddress() {
      const port = server?.port ?? clusterPort;
      return port !== undefined && advertisedHost
        ? transportAddress(advertisedHost, port, options.transport)
        : undefined;
    },
    get processes() {
      return processes;
    },
    get port() {
      return server?.port ?? clusterPort;
    },
    worker,
    records() {
      return provided.flatMap((entry) => (entry.record ? [entry.record] : []));
    },
    async unregisterAll() {
      if (options.registries.length === 0) return;
      const targets = await registries.get(options.registries).catch(() => []);
      await Promise.allSettled(
        provided.flatMap((entry) =>
          entry.record ? targets.map((registry) => registry.unregister(entry.record!)) : [],
        ),
      );
    },
    filterNames(definition, method) {
      const exported = table.lookup(definition.name, definition.version, definition.group);
      return exported?.methods.get(method)?.chain.names ?? [];
    },
    executors: pools,
    async closeExecutors(timeoutMs) {
      await Promise.all(pools.map((pool) => pool.close(timeoutMs)));
    },
    destroyExecutors() {
      for (const pool of pools) pool.destroy();
    },
  };
}

/** A scope's rate limiters and execution limit. */
interface ScopeLimits {
  readonly rate: RateLimiter[];
  /** The leaky-bucket rates (`kind: 'leaky'`). */
  readonly leaky: LeakyLimiter[];
  readonly executes: ExecutionLimit | undefined;
}

/**
 * The `rate-limit` and `executes` filters of each method of a service: the app's limits, the service's
 * (shared by its methods) and the method's, checked here (a ConfigError names the key). A method with
 * none gets no filter.
 */
function createLimitFilters(
  service: string,
  provideOptions: ProvideOptions,
  where: string,
  app: ScopeLimits,
): (method: string) => NamedFilter[] {
  const source = `code, ${where} options`;
  const check = (value: unknown, key: string): ProviderLimits | undefined =>
    value === undefined
      ? undefined
      : parseConfig(providerLimitsSchema, value, { keyPrefix: `${key}.`, sourceOf: () => source });
  const serviceLimits = check(provideOptions.limits, `${where}.limits`);
  const forService: ScopeLimits = {
    rate: createRateLimiters(serviceLimits, `service ${service}`),
    leaky: createLeakyLimiters(serviceLimits, `service ${service}`),
    executes: createExecutionLimit(serviceLimits, `service ${service}`),
  };
  const byMethod = new Map<string, NamedFilter[]>();
  for (const [method, methodOptions] of Object.entries(provideOptions.methods ?? {})) {
    const limits = check(
      (methodOptions as { limits?: unknown } | undefined)?.limits,
      `${where}.methods.${method}.limits`,
    );
    byMethod.set(
      method,
      limitFilters(app, forService, {
        rate: createRateLimiters(limits, `method ${service}.${method}`),
        leaky: createLeakyLimiters(limits, `method ${service}.${method}`),
        executes: createExecutionLimit(limits, `method ${service}.${method}`),
      }),
    );
  }
  const shared = limitFilters(app, forService, { rate: [], leaky: [], executes: undefined });
  return (method) => byMethod.get(method) ?? shared;
}

function limitFilters(...scopes: ScopeLimits[]): NamedFilter[] {
  const rate = scopes.flatMap((scope) => scope.rate);
  const leaky = scopes.flatMap((scope) => scope.leaky);
  const executes = scopes.flatMap((scope) => (scope.executes === undefined ? [] : [scope.executes]));
  return [
    ...(rate.length > 0 ? [rateLimitFilter(rate)] : []),
    ...(executes.length > 0 ? [executesFilter(executes)] : []),
    ...(leaky.length > 0 ? [leakyRateFilter(leaky)] : []),
  ];
}
