/**
 * The consumer's configuration keys (`consumer.*`), the defaults of every reference: declared here
 * (schema, meaning, default) once; config/callisto-config.ts composes them into the app's configuration,
 * a reference overrides them (`refer(def, { … })`, resolve-reference-options.ts), and
 * docs/configuration.md is generated from the comments here. Defaults of behaviours implemented
 * elsewhere are taken from there (the outlier detector, the retry budget, the balancers, connections).
 */
import { z } from 'zod';
import { DEFAULT_THROTTLE_K } from '../cluster/adaptive-throttle.js';
import { DEFAULT_OUTLIER_OPTIONS } from '../cluster/circuit-breaker.js';
import { DEFAULT_RETRY_BUDGET_OPTIONS } from '../cluster/retry-budget.js';
import {
  type ClusterName,
  type CompressorName,
  extensionNameSchema,
  type LoadBalancerName,
  type RetryPolicyName,
  type SerializerName,
} from '../extension/extension-names.js';
import { DEFAULT_LOAD_BALANCER, DEFAULT_LOAD_BALANCER_OPTIONS } from '../loadbalance/load-balancer.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_MAX_QUEUED_BYTES } from '../protocol/connection-options.js';
import { DEFAULT_COMPRESSOR } from '../serialization/compression/zlib-compressors.js';
import { DEFAULT_SERIALIZER } from '../serialization/serializer.js';
import { clientTlsConfigSchema, DEFAULT_CLIENT_TLS_CONFIG } from '../transport/tls-options.js';

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const consumerConfigSchema = z.strictObject({
  /** Call timeout, ms, of methods that set none; 0 for none. Default 3000. */
  timeoutMs: nonNegativeInt,
  /** Serializer for requests. Default 'msgpack'. */
  serializer: extensionNameSchema<SerializerName>(),
  /** Compressor of requests and of the answers this consumer takes, when compression is on (compressThresholdBytes > 0): deflate, gzip, brotli or a registered one; a provider answers in it or uncompressed. Default 'deflate'. */
  compressor: extensionNameSchema<CompressorName>(),
  /** Load balancer name. Default 'random'. */
  loadbalance: extensionNameSchema<LoadBalancerName>(),
  /** Fault-tolerance strategy name. Default 'failover'. */
  cluster: extensionNameSchema<ClusterName>(),
  /** failover: extra attempts. Default 2. */
  retries: nonNegativeInt,
  /** Longest wait for one attempt of an idempotent method, ms; a slower attempt fails Timeout and is tried on another provider while the call's deadline lasts (a host that went silent costs this, not the whole deadline). 0: every attempt may use what is left of the deadline. Default 0. */
  attemptTimeoutMs: nonNegativeInt,
  /** A connection with calls waiting that receives nothing this long (a ping is sent halfway; a live provider answers it however long its handlers run) is suspected: no new attempt goes to it, and its waiting idempotent attempts fail Network and are retried elsewhere within their deadline (non-idempotent ones keep waiting); the first frame from it clears the suspicion. Never longer than heartbeatIntervalMs. 0 turns it off. Default 1000. */
  suspectAfterMs: nonNegativeInt,
  /** Retry delay policy: 'none' (never retry), 'fixed' (every retryDelayMs), 'exponential' (with jitter), 'adaptive' (from the call's attempts' response times, docs/cluster.md). Default 'fixed'. */
  retry: extensionNameSchema<RetryPolicyName>(),
  /** Delay of 'fixed', first delay of 'exponential' (which starts from 100 when this is 0), shortest delay of 'adaptive', ms. Default 0 (retry at once). */
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
  /** Learn effective weights: each failed attempt (network, timeout, overload, internal) lowers a provider's weight for this consumer, each success restores it step by step, down to a tenth at most; every weight-aware balancer uses them (docs/cluster.md). Default true. */
  effectiveWeight: z.boolean(),
  /** Eject failing providers from selection. Default true. */
  outlierDetection: z.boolean(),
  /** Never eject more than this share of providers. Default 0.4. */
  maxEjectionRatio: z.number().min(0).max(1),
  /** Failures in a row (network, timeout, overload) that eject a provider. Default 5. */
  ejectAfterFailures: positiveInt,
  /** First ejection period, ms, doubled on repeated ejections; then one probe call is let through. Default 10000. */
  ejectionMs: positiveInt,
  /** Directory where the last known provider lists are kept for registry outages, one file per registry and service (`<dir>/<registry>/<service>.json`, the registry's folder named from its address without credentials); '' disables. Default '.callisto/snapshots'. */
  snapshotDir: z.string(),
  /** Do not apply a sudden change to zero providers while their connections are healthy. Default true. */
  emptyProtection: z.boolean(),
  /** TLS to providers: on, every provider is called over TLS, never in plaintext (docs/security.md). */
  tls: clientTlsConfigSchema,
  /** A token sent with every call (`authorization: Bearer …`) for providers that require one; '' none. Default ''. */
  credentials: z.string(),
  /** Name this app (`application`) in every call, for the providers' per-application rate limits when auth is off. Default false. */
  sendApplication: z.boolean(),
  /** The zone this app's calls prefer under a zone routing rule (docs/routing.md); '' takes server.zone. Default ''. */
  zone: z.string(),
  /** Try another provider when one answers RateLimited (any method: it did not run). Default false. */
  failoverOnRateLimited: z.boolean(),
  /** Client-side adaptive throttling (docs/operations.md, "Overload protection"): per provider, over the last 2 minutes, an attempt is refused before it is sent with probability max(0, (requests − K·accepts) / (requests + 1)), where accepts are answers that are not Overloaded/RateLimited refusals; a refused attempt fails Overloaded, never sent, and failover moves the call to an untried provider at once, not counted as a retry. Default true. */
  adaptiveThrottling: z.boolean(),
  /** K of adaptive throttling: attempts sent per accepted one before any is refused locally; lower throttles sooner. At least 1. Default 2. */
  adaptiveThrottlingK: z.number().min(1),
  /** A call made while a provider method runs ends by the served call's deadline less deadlineMarginMs, when that comes before its own timeout (docs/cluster.md, "Context across hops"). Default true. */
  inheritDeadline: z.boolean(),
  /** What an inherited deadline keeps back for the served call to answer, ms. Default 5. */
  deadlineMarginMs: nonNegativeInt,
  /** A call made while a provider method runs is cancelled when the served call is (its caller gave up or went away, or its deadline passed), here and on its provider. Default true. */
  inheritCancellation: z.boolean(),
  /** A call made while a provider method runs carries the served call's routing tag (the `callisto-tag` attachment). Default true. */
  inheritTag: z.boolean(),
  /** A call made while a provider method runs carries the served call's baggage: the W3C `baggage` attachment and the `baggage-*` ones, at most 16 keys and 4096 bytes. Default true. */
  inheritBaggage: z.boolean(),
  /** A call made while a provider method runs continues the served call's trace (a W3C `traceparent` with its trace id and a new span id, and its `tracestate`), with or without an OpenTelemetry SDK. Default true. */
  inheritTrace: z.boolean(),
  /** One layer of a chain of calls retries: a call made while a provider method serves a retry (`callisto-retry`) makes one attempt, and a failure its provider already retried further down (`callisto-retried`) is not retried again. false: retries as configured. Default true. */
  inheritRetry: z.boolean(),
  /** hedging: wait this long before the second attempt, ms; 0: the method's observed latency at hedgePercentile. Default 0. */
  hedgeDelayMs: nonNegativeInt,
  /** hedging: the percentile of the method's observed latencies (its last 512 answered attempts) a call waits for before it is hedged, when hedgeDelayMs is 0. Between 50 and 99.9. Default 95. */
  hedgePercentile: z.number().min(50).max(99.9),
  /** hedging: hedges allowed as a share of the method's calls over 10 s (their budget); a call that finds it spent is not hedged. Between 0 and 1. Default 0.1. */
  hedgeBudgetRatio: z.number().min(0).max(1),
});

export type ConsumerConfig = z.infer<typeof consumerConfigSchema>;

export const DEFAULT_CONSUMER_CONFIG: ConsumerConfig = {
  timeoutMs: 3_000,
  serializer: DEFAULT_SERIALIZER,
  compressor: DEFAULT_COMPRESSOR,
  loadbalance: DEFAULT_LOAD_BALANCER,
  cluster: 'failover',
  retries: 2,
  attemptTimeoutMs: 0,
  suspectAfterMs: 1_000,
  retry: 'fixed',
  retryDelayMs: 0,
  retryMaxDelayMs: 1_000,
  retryBudgetRatio: DEFAULT_RETRY_BUDGET_OPTIONS.ratio,
  forks: 2,
  failbackQueueSize: 1_000,
  failbackAttempts: 3,
  failbackDelayMs: 1_000,
  sticky: false,
  injvm: true,
  connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
  idleTimeoutMs: 600_000,
  maxQueuedBytes: DEFAULT_MAX_QUEUED_BYTES,
  warmupMs: DEFAULT_LOAD_BALANCER_OPTIONS.warmupMs,
  effectiveWeight: DEFAULT_LOAD_BALANCER_OPTIONS.effectiveWeight,
  outlierDetection: true,
  maxEjectionRatio: DEFAULT_OUTLIER_OPTIONS.maxEjectionRatio,
  ejectAfterFailures: DEFAULT_OUTLIER_OPTIONS.consecutiveFailures,
  ejectionMs: DEFAULT_OUTLIER_OPTIONS.baseEjectionMs,
  snapshotDir: '.callisto/snapshots',
  emptyProtection: true,
  tls: DEFAULT_CLIENT_TLS_CONFIG,
  credentials: '',
  sendApplication: false,
  zone: '',
  failoverOnRateLimited: false,
  adaptiveThrottling: true,
  adaptiveThrottlingK: DEFAULT_THROTTLE_K,
  inheritDeadline: true,
  deadlineMarginMs: 5,
  inheritCancellation: true,
  inheritTag: true,
  inheritBaggage: true,
  inheritTrace: true,
  inheritRetry: true,
  hedgeDelayMs: 0,
  hedgePercentile: 95,
  hedgeBudgetRatio: 0.1,
};
