/**
 * The consumer half of an app: the shared connection pool, one provider source per service (and
 * source), and `refer()`, which assembles each method's invoker from extensions chosen by name:
 * in-process when the app provides the service itself, else cluster strategy + load balancer.
 */

import type { CallistoConfig, ConsumerConfig } from '../config/callisto-config.js';
import { ConfigError } from '../config/config-error.js';
import type { ClientInvocation } from '../consumer/client-invocation.js';
import { createClusterContext } from '../consumer/cluster-context.js';
import { createHealthTracker, createRetryControl } from '../consumer/cluster-policies.js';
import {
  type ConnectionPool,
  createConnectionPool,
  DEFAULT_POOL_RECONNECT,
} from '../consumer/connection-pool.js';
import { createOutageLog } from '../consumer/outage-log.js';
import { createReference } from '../consumer/reference.js';
import type { MethodReferenceOptions, ReferenceOptions } from '../consumer/reference-options.js';
import { type ReferenceTargets, resolveReferenceTargets } from '../consumer/reference-targets.js';
import { resolveReferenceOptions } from '../consumer/resolve-reference-options.js';
import { createDirectSource, createRegistrySource, type ServiceSource } from '../consumer/service-source.js';
import type { Filter, Invocation, Invoker } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS } from '../loadbalance/load-balancer.js';
import { type ConnectionMessage, channels } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import { observeClientCall } from '../observability/observe-client-call.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../protocol/connection-options.js';
import type { LocalCalls } from '../provider/local-calls.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { MethodDeclaration, ServiceDefinition } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import type { Transport } from '../transport/transport.js';

export interface ConsumerSide {
  readonly pool: ConnectionPool;
  refer<T>(definition: ServiceDefinition<T>, options?: ReferenceOptions<T>): Remote<T>;
  /** Every provider source, for the admin view and tests. */
  sources(): ReadonlyMap<string, ServiceSource>;
  /** Stops following registries and closes connections after their calls complete. */
  close(): Promise<void>;
  destroy(): void;
}

function publishConnection(
  address: string,
  event: ConnectionMessage['event'],
  reason: string | undefined,
): void {
  if (channels.connection.hasSubscribers) {
    channels.connection.publish({ address, event, reason } satisfies ConnectionMessage);
  }
}

export function createConsumerSide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  serializers: SerializerTable,
  registries: RegistrySet,
  local: LocalCalls,
  appFilters: readonly Filter[],
  logger: Logger,
): ConsumerSide {
  const byId: ReturnType<SerializerTable['byId']>[] = [];
  for (const serializer of serializers.serializers) byId[serializer.id] = serializer;
  const hostileLog = createRateLimitedLog((message) => logger.warn(message));
  const outages = createOutageLog((level, message) => logger[level](message));
  const transports = new Map<string, Transport>();
  const transportNamed = (name: string): Transport => {
    let transport = transports.get(name);
    if (transport === undefined) {
      transport = extensions.get('transport', name)();
      transports.set(name, transport);
    }
    return transport;
  };
  const pool = createConnectionPool(
    byId,
    {
      ...DEFAULT_POOL_RECONNECT,
      transport: transportNamed,
      idleTimeoutMs: config.consumer.idleTimeoutMs,
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
    {
      onRefused: (_address, reason) => hostileLog.warn('refused', reason),
      onGoAway: (address) => {
        logger.info(`provider ${address} is going away; no new calls routed to it`);
        publishConnection(address, 'goaway', undefined);
      },
      onDisconnect: (address, error) => {
        if (error) outages.lost(address, error);
        publishConnection(address, 'closed', error?.message);
      },
      onConnect: (address) => {
        outages.connected(address);
        publishConnection(address, 'open', undefined);
      },
      onRelease: (address) => outages.forgotten(address),
      // Heartbeat round trips feed the latency-aware balancers (shortestresponse, p2c) even when idle.
      onHeartbeatRtt: (address, rttMs) => {
        for (const source of sources.values()) {
          for (const endpoint of source.directory.list()) {
            if (endpoint.address === address) endpoint.stats.recordLatency(rttMs);
          }
        }
      },
    },
  );
  const sources = new Map<string, ServiceSource>();
  const closers: Array<() => void> = [];
  const log = (level: 'info' | 'warn' | 'error', message: string) => logger[level](message);

  const sourceFor = (definition: ServiceDefinition<unknown>, targets: ReferenceTargets): ServiceSource => {
    const { urls, registries: registryAddresses } = targets;
    const descriptor = urls?.length ? `url:${urls.join(',')}` : `registry:${registryAddresses.join(',')}`;
    const key = `${serviceKeyString(definition)}|${descriptor}`;
    let source = sources.get(key);
    if (source === undefined) {
      if (urls) source = createDirectSource(definition, urls, pool);
      else if (registryAddresses.length > 0) {
        source = createRegistrySource(
          definition,
          registries,
          pool,
          {
            addresses: registryAddresses,
            application: config.application,
            snapshotDir: config.consumer.snapshotDir,
            emptyProtection: config.consumer.emptyProtection,
            startTimeoutMs: config.startTimeoutMs,
          },
          logger,
        );
      } else {
        throw new ConfigError(
          `refer(${definition.name}).url`,
          undefined,
          'a provider address (url) or a registry',
          {
            problem: `${definition.name} is no longer provided by this app and there is no registry`,
          },
        );
      }
      sources.set(key, source);
    }
    return source;
  };

  const remoteInvoker = (
    definition: ServiceDefinition<unknown>,
    source: ServiceSource,
    method: string,
    options: ConsumerConfig,
    methodOptions: MethodReferenceOptions,
  ): Invoker => {
    const loadBalancer = extensions.get(
      'loadbalance',
      options.loadbalance,
    )({
      ...DEFAULT_LOAD_BALANCER_OPTIONS,
      warmupMs: options.warmupMs,
      hashArguments: methodOptions.hashArguments ?? DEFAULT_LOAD_BALANCER_OPTIONS.hashArguments,
    });
    const context = createClusterContext({
      label: `${definition.name}.${method}`,
      options: {
        retries: options.retries,
        forks: options.forks,
        sticky: options.sticky,
        failbackAttempts: options.failbackAttempts,
        failbackDelayMs: options.failbackDelayMs,
        failbackQueueSize: options.failbackQueueSize,
      },
      directory: source.directory,
      pool,
      loadBalancer,
      health: options.outlierDetection ? createHealthTracker(source, options) : undefined,
      retry: createRetryControl(extensions, source, options),
      log,
    });
    const strategy = extensions.get('cluster', options.cluster)(context);
    if (strategy.close) closers.push(() => strategy.close!());
    if (source.isReady) return strategy;
    return async (invocation) => {
      if (!source.isReady) await source.ready;
      return strategy(invocation);
    };
  };

  const localInvoker = (definition: ServiceDefinition<unknown>): Invoker | undefined => {
    if (!local.provides(definition)) return undefined;
    return (invocation: Invocation) => {
      const call = invocation as ClientInvocation;
      call.remoteAddress = 'injvm';
      const result = new Promise<unknown>((resolve, reject) => {
        local.serve({
          service: call.service,
          method: call.method,
          args: call.args,
          attachments: call.attachments,
          deadline: call.deadline,
          oneway: call.oneway,
          idempotent: call.idempotent,
          sent: false,
          responseAttachments: call.responseAttachments,
          answered(value) {
            call.responseAttachments = this.responseAttachments;
            resolve(value);
          },
          failed(error) {
            call.responseAttachments = this.responseAttachments;
            reject(error);
          },
        });
      });
      return channels.clientCall.hasSubscribers ? observeClientCall(result, invocation, 'injvm') : result;
    };
  };

  return {
    pool,
    refer<T>(definition: ServiceDefinition<T>, options: ReferenceOptions<T> = {}): Remote<T> {
      const resolved = resolveReferenceOptions(definition, options, config.consumer, extensions);
      const base = resolved.reference;
      const serializer = serializers.byName(base.serializer);
      const forced = options.mock === true || options.mock === 'force';
      const def = definition as ServiceDefinition<unknown>;
      const targets = forced
        ? undefined
        : resolveReferenceTargets(def, options as ReferenceOptions<unknown>, {
            extensions,
            appRegistries: config.registry,
            inProcess: {
              injvm: base.injvm,
              provided: local.provides(def),
            },
          });
      return createReference<T>({
        definition,
        options: { ...options, filters: [...appFilters, ...(options.filters ?? [])] },
        timeoutMs: base.timeoutMs,
        serializer,
        methodInvoker(
          method: string,
          methodOptions: MethodReferenceOptions,
          _declaration: MethodDeclaration,
        ) {
          if (targets === undefined) throw new RpcError('Internal', 'mock references have no remote invoker');
          const merged = resolved.configOf(method);
          let remote: Invoker | undefined;
          let inProcess: Invoker | undefined | null = base.injvm ? null : undefined;
          return (invocation) => {
            if (inProcess === null) inProcess = localInvoker(def);
            if (inProcess !== undefined) return inProcess(invocation);
            remote ??= remoteInvoker(def, sourceFor(def, targets), method, merged, methodOptions);
            return remote(invocation);
          };
        },
      });
    },
    sources: () => sources,
    async close() {
      for (const close of closers.splice(0)) close();
      await pool.close();
      await Promise.all([...sources.values()].map((source) => source.close()));
      sources.clear();
    },
    destroy() {
      for (const close of closers.splice(0)) close();
      pool.destroy();
      for (const source of sources.values()) void source.close();
      sources.clear();
    },
  };
}
