/**
 * Every option of a Callisto app, its default, and its validation, in one place. The defaults object
 * is also the list of keys that files, `.properties` and `CALLISTO_*` variables may set.
 */
import { z } from 'zod';
import type {
  ClusterName,
  LoadBalancerName,
  RetryPolicyName,
  SerializerName,
} from '../extension/extension-names.js';
import { DEFAULT_SERVER_OPTIONS } from '../server/server-options.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../transport/transport-options.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();
/** An extension name: typed as the registered names, checked against the app's extensions at start. */
const extensionName = <Name extends string>() => z.string().min(1) as unknown as z.ZodType<Name, Name>;
/** A share of a limit: more than 0, at most 1. */
const share = z.number().gt(0).max(1);

export const serverConfigSchema = z.strictObject({
  /** Interface to listen on. Default '127.0.0.1'; '0.0.0.0' (or '::') serves other hosts. */
  host: z.string().min(1),
  /** Port; 0 picks a free one. Default 0. */
  port: z.number().int().min(0).max(65535),
  /** Host written to the registry, for consumers to connect to; '' means `host`, or for a wildcard `host` the first non-internal interface address (IPv4 first). Default ''. */
  advertiseHost: z
    .string()
    .regex(/^(?!(?:0\.0\.0\.0|::|\[::\]|0:0:0:0:0:0:0:0)$)(?![^:]*:[^:]*$)[^\s/]*$/)
    .describe(
      "'' or a host name or address consumers can reach: not a wildcard such as 0.0.0.0, without a port",
    ),
  /** Serializer names accepted from consumers; empty means all registered except v8 (trusted peers only: name it to accept it). Default []. */
  serializers: z.array(extensionName<SerializerName>()),
  /** Calls executing at once before new ones are answered Overloaded. Default 10000. */
  maxConcurrentCalls: positiveInt,
  /** Send stack traces with errors. Default false. */
  exposeStack: z.boolean(),
  /** What handler errors tell callers: 'declared' (declared errors' fields, system errors scrubbed) or 'all' (trusted setups). Default 'declared'. */
  exposeErrors: z.enum(['declared', 'all']),
  /** Connections at once; more are closed as they arrive. Default 4096. */
  maxConnections: positiveInt,
  /** Connections at once from one remote address. Default 256. */
  maxConnectionsPerAddress: positiveInt,
  /** Share of maxConcurrentCalls and maxElementsInFlight one connection may hold (0–1]. Default 0.5. */
  connectionShare: share,
  /** Share of maxConcurrentCalls and maxElementsInFlight the connections of one remote address may hold together (0–1]. Default 0.5. */
  addressShare: share,
  /** Decoded argument elements held by executing calls, across connections. Default 2000000. */
  maxElementsInFlight: positiveInt,
  /** Largest accepted frame, bytes. Default 8388608 (8 MiB). */
  maxFrameBytes: z.number().int().min(1024),
  /** Response bytes queued on one connection before it stops reading. Default 8388608. */
  writeHighWaterBytes: positiveInt,
  /** Load-balancing weight announced to consumers. Default 100. */
  weight: nonNegativeInt,
  /** Free-form labels announced to consumers. Default {}. */
  tags: z.record(z.string(), z.string()),
});

export const consumerConfigSchema = z.strictObject({
  /** Call timeout, ms, of methods that set none; 0 for none. Default 3000. */
  timeoutMs: nonNegativeInt,
  /** Serializer for requests. Default 'msgpack'. */
  serializer: extensionName<SerializerName>(),
  /** Load balancer name. Default 'random'. */
  loadbalance: extensionName<LoadBalancerName>(),
  /** Fault-tolerance strategy name. Default 'failover'. */
  cluster: extensionName<ClusterName>(),
  /** failover: extra attempts. Default 2. */
  retries: nonNegativeInt,
  /** Retry delay policy: 'none' (never retry), 'fixed' (every retryDelayMs), 'exponential' (with jitter). Default 'fixed'. */
  retry: extensionName<RetryPolicyName>(),
  /** Delay of 'fixed', first delay of 'exponential' (which starts from 100 when this is 0), ms. Default 0 (retry at once). */
  retryDelayMs: nonNegativeInt,
  /** Longest retry delay, ms. Default 1000. */
  retryMaxDelayMs: nonNegativeInt,
  /** Retries allowed as a share of calls (retry budget). Default 0.2. */
  retryBudgetRatio: z.number().min(0).max(1),
  /** forking: providers called at once. Default 2. */
  forks: positiveInt,
  /** failback: failed calls kept for background retries at once; more are logged and dropped. Default 1000. */
  failbackQueueSize: positiveInt,
  /** failback: background retries of one failed call before it is given up (logged). Default 3. */
  failbackAttempts: positiveInt,
  /** failback: delay before the first background retry, ms, doubled before each further one. Default 1000. */
  failbackDelayMs: positiveInt,
  /** Keep the same provider while healthy. Default false. */
  sticky: z.boolean(),
  /** Call services provided by the same app in-process. Default true. */
  injvm: z.boolean(),
  /** Opening a connection may take this long, ms. Default 3000. */
  connectTimeoutMs: positiveInt,
  /** Close connections unused this long, ms; 0 never. Default 600000. */
  idleTimeoutMs: nonNegativeInt,
  /** Bytes queued unsent on one connection before calls are rejected Overloaded. Default 67108864 (64 MiB). */
  maxQueuedBytes: positiveInt,
  /** Weight ramp-up of new providers, ms. Default 600000. */
  warmupMs: nonNegativeInt,
  /** Eject failing providers from selection. Default true. */
  outlierDetection: z.boolean(),
  /** Never eject more than this share of providers. Default 0.4. */
  maxEjectionRatio: z.number().min(0).max(1),
  /** Failures in a row (network, timeout, overload) that eject a provider. Default 5. */
  ejectAfterFailures: positiveInt,
  /** First ejection period, ms, doubled on repeated ejections; then one probe call is let through. Default 10000. */
  ejectionMs: positiveInt,
  /** Directory where the last known provider lists are kept for registry outages; '' disables. Default '.callisto/snapshots'. */
  snapshotDir: z.string(),
  /** Do not apply a sudden change to zero providers while their connections are healthy. Default true. */
  emptyProtection: z.boolean(),
});

export const callistoConfigSchema = z.strictObject({
  /** Application name, announced to registries. Default 'callisto-app'. */
  application: z.string().min(1),
  /** Registry addresses (file://, etcd://, zookeeper://, redis://, direct://). Default [] (none). */
  registry: z.array(
    z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//)
      .describe('a registry address kind://…, e.g. etcd://127.0.0.1:2379 or file://.callisto/registry'),
  ),
  /** How long a dead provider's registration may survive, ms. Default 10000. */
  registryTtlMs: z.number().int().min(1000),
  /** How long start() waits for the registries to take its registrations before failing, and a first discovery waits for a registry's list before using the snapshot, ms (an unreachable registry is logged at once, and retried meanwhile). Default 3000. */
  startTimeoutMs: positiveInt,
  /** Heartbeat interval on idle connections, ms. Default 30000. */
  heartbeatIntervalMs: positiveInt,
  /** Request and response bodies this large or larger are DEFLATE-compressed; 0 turns it off (and compressed bodies are refused). Default 0. */
  compressThresholdBytes: nonNegativeInt,
  /** A compressed body may inflate to at most this multiple of its size. Default 256. */
  maxInflateRatio: z.number().min(1),
  /** Elements (values) one request or answer body may decode into. Default 1000000. */
  maxDecodedElements: positiveInt,
  /** Once a frame has started to arrive it must be complete within this, ms. Default 30000. */
  frameTimeoutMs: positiveInt,
  /** Bytes of partial frames all connections of a provider (and, separately, of a consumer) may hold together. Default 67108864 (64 MiB). */
  maxPartialFrameBytes: z.number().int().min(1024),
  /** Graceful shutdown deadline, ms. Default 10000. */
  shutdownTimeoutMs: nonNegativeInt,
  /** Install SIGTERM/SIGINT handlers that close the app gracefully. Default false. */
  handleSignals: z.boolean(),
  /** Log level. Default 'info'. */
  logLevel: z.enum(LOG_LEVELS),
  /** Modules to load extensions from (each exports `register(extensions)`). Default []. */
  extensions: z.array(z.string()),
  server: serverConfigSchema,
  consumer: consumerConfigSchema,
});

export type CallistoConfig = z.infer<typeof callistoConfigSchema>;
export type ServerConfig = CallistoConfig['server'];
export type ConsumerConfig = CallistoConfig['consumer'];

/** What code passes: any subset, nested. */
export type CallistoConfigInput = {
  [K in keyof CallistoConfig]?: CallistoConfig[K] extends unknown[]
    ? CallistoConfig[K] | string
    : CallistoConfig[K] extends Record<string, unknown>
      ? Partial<CallistoConfig[K]>
      : CallistoConfig[K];
};

export const DEFAULT_CONFIG: CallistoConfig = {
  application: 'callisto-app',
  registry: [],
  registryTtlMs: 10_000,
  startTimeoutMs: 3_000,
  heartbeatIntervalMs: 30_000,
  compressThresholdBytes: 0,
  maxInflateRatio: DEFAULT_CONNECTION_OPTIONS.maxInflateRatio,
  maxDecodedElements: DEFAULT_CONNECTION_OPTIONS.maxDecodedElements,
  frameTimeoutMs: DEFAULT_CONNECTION_OPTIONS.frameTimeoutMs,
  maxPartialFrameBytes: DEFAULT_CONNECTION_OPTIONS.maxPartialFrameBytes,
  shutdownTimeoutMs: 10_000,
  handleSignals: false,
  logLevel: 'info',
  extensions: [],
  server: {
    host: '127.0.0.1',
    port: 0,
    advertiseHost: '',
    serializers: [],
    maxConcurrentCalls: 10_000,
    exposeStack: false,
    exposeErrors: DEFAULT_SERVER_OPTIONS.exposeErrors,
    maxConnections: DEFAULT_SERVER_OPTIONS.maxConnections,
    maxConnectionsPerAddress: DEFAULT_SERVER_OPTIONS.maxConnectionsPerAddress,
    connectionShare: DEFAULT_SERVER_OPTIONS.connectionShare,
    addressShare: DEFAULT_SERVER_OPTIONS.addressShare,
    maxElementsInFlight: DEFAULT_SERVER_OPTIONS.maxElementsInFlight,
    maxFrameBytes: 8 * 1024 * 1024,
    writeHighWaterBytes: 8 * 1024 * 1024,
    weight: 100,
    tags: {},
  },
  consumer: {
    timeoutMs: 3_000,
    serializer: 'msgpack',
    loadbalance: 'random',
    cluster: 'failover',
    retries: 2,
    retry: 'fixed',
    retryDelayMs: 0,
    retryMaxDelayMs: 1_000,
    retryBudgetRatio: 0.2,
    forks: 2,
    failbackQueueSize: 1_000,
    failbackAttempts: 3,
    failbackDelayMs: 1_000,
    sticky: false,
    injvm: true,
    connectTimeoutMs: 3_000,
    idleTimeoutMs: 600_000,
    maxQueuedBytes: 64 * 1024 * 1024,
    warmupMs: 600_000,
    outlierDetection: true,
    maxEjectionRatio: 0.4,
    ejectAfterFailures: 5,
    ejectionMs: 10_000,
    snapshotDir: '.callisto/snapshots',
    emptyProtection: true,
  },
};
