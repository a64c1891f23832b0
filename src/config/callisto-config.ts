/**
 * Every option of a Callisto app, its default, and its validation, in one place. The defaults object
 * is also the list of keys that files, `.properties` and `CALLISTO_*` variables may set.
 */
import { z } from 'zod';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const serverConfigSchema = z.strictObject({
  /** Interface to listen on. Default '127.0.0.1'; '0.0.0.0' with `advertiseHost` to serve other hosts. */
  host: z.string().min(1),
  /** Port; 0 picks a free one. Default 0. */
  port: z.number().int().min(0).max(65535),
  /** Host written to the registry; '' means `host` (127.0.0.1 for a wildcard host). Default ''. */
  advertiseHost: z.string(),
  /** Serializer names accepted from consumers; empty means all registered. Default []. */
  serializers: z.array(z.string()),
  /** Calls executing at once before new ones are answered Overloaded. Default 10000. */
  maxConcurrentCalls: positiveInt,
  /** Send stack traces with errors. Default false. */
  exposeStack: z.boolean(),
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
  /** Default call timeout, ms; 0 for none. Default 3000. */
  timeoutMs: nonNegativeInt,
  /** Serializer for requests. Default 'msgpack'. */
  serializer: z.string().min(1),
  /** Load balancer name. Default 'random'. */
  loadbalance: z.string().min(1),
  /** Fault-tolerance strategy name. Default 'failover'. */
  cluster: z.string().min(1),
  /** failover: extra attempts. Default 2. */
  retries: nonNegativeInt,
  /** Retry delay policy: 'none' (never retry), 'fixed' (every retryDelayMs), 'exponential' (with jitter). Default 'fixed'. */
  retry: z.string().min(1),
  /** Delay of 'fixed', first delay of 'exponential', ms. Default 0 (retry at once). */
  retryDelayMs: nonNegativeInt,
  /** Longest retry delay, ms. Default 1000. */
  retryMaxDelayMs: nonNegativeInt,
  /** Retries allowed as a share of calls (retry budget). Default 0.2. */
  retryBudgetRatio: z.number().min(0).max(1),
  /** forking: providers called at once. Default 2. */
  forks: positiveInt,
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
  registry: z.array(z.string().regex(/^[a-z][a-z0-9+.-]*:\/\//, 'expected an address like etcd://host:2379')),
  /** How long a dead provider's registration may survive, ms. Default 10000. */
  registryTtlMs: z.number().int().min(1000),
  /** How long start() waits for the registries to take its registrations before failing, and a first discovery waits for a registry's list before using the snapshot, ms (an unreachable registry is logged at once, and retried meanwhile). Default 3000. */
  startTimeoutMs: positiveInt,
  /** Heartbeat interval on idle connections, ms. Default 30000. */
  heartbeatIntervalMs: positiveInt,
  /** Request and response bodies this large or larger are DEFLATE-compressed; 0 turns it off. Default 0. */
  compressThresholdBytes: nonNegativeInt,
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
