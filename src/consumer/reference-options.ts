import type { FilterEntry } from '../core/filter.js';
import type { Attachments } from '../core/invocation.js';
import type { ResultCacheOptions } from '../governance/cache-options.js';
import type { CallPriority } from '../governance/call-priority.js';
import type { ConsumerLimits } from '../governance/limit-options.js';
import type { RetriesExhaustedMessage } from '../observability/channels.js';
import type { Implementation, MethodNames, Remote } from '../service/service-types.js';
import type { ConsumerConfig } from './consumer-options.js';

/** The `consumer` keys a method may override on a reference. */
export const METHOD_CONSUMER_KEYS = [
  'timeoutMs',
  'compressor',
  'loadbalance',
  'cluster',
  'retries',
  'attemptTimeoutMs',
  'retry',
  'retryDelayMs',
  'retryMaxDelayMs',
  'forks',
  'sticky',
  'hedgeDelayMs',
  'hedgePercentile',
  'hedgeBudgetRatio',
] as const satisfies ReadonlyArray<keyof ConsumerConfig>;

/**
 * `consumer` keys that belong to the whole app (one connection pool, one snapshot directory): they are
 * set in the app's configuration, never per reference.
 */
export const APP_ONLY_CONSUMER_KEYS = [
  'connectTimeoutMs',
  'suspectAfterMs',
  'idleTimeoutMs',
  'maxQueuedBytes',
  'snapshotDir',
  'emptyProtection',
  'tls',
  'credentials',
  'sendApplication',
  'zone',
] as const satisfies ReadonlyArray<keyof ConsumerConfig>;

/** Options a method may override on a reference. */
export interface MethodReferenceOptions
  extends Partial<Pick<ConsumerConfig, (typeof METHOD_CONSUMER_KEYS)[number]>> {
  /** Overrides the definition's `idempotent`. */
  idempotent?: boolean;
  /** Overrides the definition's `oneway`. */
  oneway?: boolean;
  /** consistenthash: argument positions forming the key. Default [0]. */
  hashArguments?: number[];
  /** Consumer filters of this method, after the reference's (per call, or `position: 'attempt'`). */
  filters?: FilterEntry[];
  /** This method's own limits (`rate`: calls a second, `actives`: calls in flight), besides the reference's. */
  limits?: ConsumerLimits;
  /**
   * Result cache of this method (`{ ttlMs, max }`, only on an idempotent method), or `false` to switch
   * off the one its declaration has. Default: the declaration's.
   */
  cache?: ResultCacheOptions | false;
}

/**
 * Options of one reference (`app.refer(definition, options)`); unset fields come from the app's
 * `consumer` config. Everything is checked by `refer()` itself: unknown keys, values, extension names,
 * addresses, and the names under `methods`.
 */
export interface ReferenceOptions<T>
  extends Partial<Omit<ConsumerConfig, (typeof APP_ONLY_CONSUMER_KEYS)[number]>> {
  /** Direct provider addresses (`host:port` or `callisto://host:port`), bypassing registries. */
  url?: string | string[];
  /** Registries for this reference instead of the app's. */
  registry?: string | string[];
  /**
   * Write a consumer record for this service in the registries (what `callisto ls` and the dashboard
   * list as consumers); false for a tool's passing calls, which should leave nothing behind. Default true.
   */
  registerConsumer?: boolean;
  /**
   * Mock mode: `true` or `'force'` answers from the mock without calling any provider; `'fail'` calls
   * and answers from the mock when the call fails (business errors excepted). Default false.
   */
  mock?: boolean | 'force' | 'fail';
  /** The mock implementation; methods it lacks answer the definition's per-method `mock`, else undefined. */
  mockImpl?: Partial<Implementation<T>>;
  /** Local logic in front of the remote calls (caching, argument checks): returns the methods it replaces. */
  stub?: (remote: Remote<T>) => Partial<Remote<T>>;
  /**
   * Consumer filters of this reference, after the app's: plain functions run once per call (before the
   * cluster), `defineFilter({ position: 'attempt', … })` ones once per attempt (after the balancer).
   */
  filters?: FilterEntry[];
  /** Attachments sent with every call of this reference. */
  attachments?: Attachments;
  /**
   * The routing tag of every call of this reference (the `callisto-tag` attachment, docs/routing.md):
   * its calls go to providers labelled with it (`server.tags.tag`), else to untagged ones.
   */
  tag?: string;
  /**
   * Limits of the reference, shared by its methods (docs/governance.md): `rate` (calls a second, over
   * it `RateLimited`) and `actives` (calls in flight, over it `Overloaded`), refused before sending.
   */
  limits?: ConsumerLimits;
  /** Per-method overrides. */
  methods?: { [K in MethodNames<T>]?: MethodReferenceOptions };
  /**
   * Called once per call that failed with its retries used up (docs/cluster.md): a method with
   * `retries` > 0 whose last attempt failed with an error that would have been retried. Also published
   * on the `callisto:client:retries-exhausted` diagnostics channel. A hook that throws is logged.
   */
  onRetriesExhausted?: (event: RetriesExhaustedMessage) => void;
  /**
   * The protocol this reference calls through: `callisto` (default, the provider's RPC port, tcp or
   * tls) or `http` (the provider's HTTP/JSON entry, `server.http`: JSON bodies whatever `serializer`
   * says, HTTPS verified with `consumer.tls` when the provider serves TLS; docs/http.md). Providers
   * whose record lists protocols without this one are skipped, as are, for `http`, records without an
   * HTTP port; with `url`, `http` takes `http://host:port`, `https://host:port` or `host:port` (the
   * HTTP port). An `http` reference never calls in-process. `grpc` calls gRPC servers, Callisto or
   * not (docs/grpc-consumer.md): `url` takes `grpc://host:port` (h2c) and `grpcs://host:port` (TLS,
   * verified with `consumer.tls`), and a registry's records whose `transport` is `grpc` or `grpcs`;
   * a reference whose `url` addresses are all `grpc://`/`grpcs://` is a `grpc` one without saying so.
   * A `grpc` reference never calls in-process.
   */
  protocol?: 'callisto' | 'http' | 'grpc';
}

/** Keys of ReferenceOptions that are not `consumer` keys. */
export const REFERENCE_ONLY_KEYS = [
  'url',
  'registry',
  'registerConsumer',
  'mock',
  'mockImpl',
  'stub',
  'filters',
  'attachments',
  'tag',
  'limits',
  'methods',
  'onRetriesExhausted',
  'protocol',
] as const satisfies ReadonlyArray<keyof ReferenceOptions<unknown>>;

/** Per-call options (`withOptions(ref, options).method(...)`). */
export interface CallOptions {
  /** This call's timeout, ms (0 for none). */
  timeoutMs?: number;
  /** Cancels the call. */
  signal?: AbortSignal;
  /** Attachments for this call, merged over the reference's. */
  attachments?: Attachments;
  /** A token for this call (sent as `authorization: Bearer …`), over the app's and the reference's. */
  credentials?: string;
  /** `false`: past the method's result cache (its answer is not kept either). Default true. */
  cache?: boolean;
  /**
   * This call's priority at the provider's adaptive concurrency limit (the `callisto-priority`
   * attachment, over the method's declared one; docs/operations.md "Overload protection"). Default: the
   * method's.
   */
  priority?: CallPriority;
  /** This call's routing tag (the `callisto-tag` attachment, over the reference's; docs/routing.md). */
  tag?: string;
}
