/**
 * The provider's limiters of one scope (the app, a service, a method), built once from its
 * `ProviderLimits` (limit-options.ts): the rate limits as token buckets, `executes` as a counter. The
 * `rate-limit` and `executes` filters (src/filters/) run the limiters of a method's scopes in order.
 */
import type { Invocation } from '../core/invocation.js';
import {
  createKeyedLeakyBuckets,
  createLeakyBucket,
  type LeakyBucket,
  type LeakyRate,
  queueOf,
} from './leaky-bucket.js';
import type { ProviderLimits } from './limit-options.js';
import { burstOf, createKeyedBuckets, createTokenBucket, type RateLimit } from './token-bucket.js';

/** The attachment a consumer names its application in (`consumer.sendApplication`). */
export const APPLICATION_ATTACHMENT = 'callisto-application';

/** One rate limit of one scope. */
export interface RateLimiter {
  /** e.g. `service example.UserService, per application "shop": 50 calls/s`. */
  describe(invocation: Invocation): string;
  /** 0 when the call may go, else milliseconds until it could (its retry-after hint). */
  take(invocation: Invocation, nowMs: number): number;
}

/** Calls executing at once in one scope. */
export interface ExecutionLimit {
  readonly label: string;
  readonly max: number;
  active: number;
}

/**
 * The caller's application: the identity the `auth` filter established (when auth is on), else the
 * application the consumer named in its attachments, else '' (every anonymous caller shares a bucket).
 */
export function callerApplication(invocation: Invocation): string {
  const identity = (invocation as { identity?: { id?: unknown } }).identity;
  if (identity !== undefined && typeof identity.id === 'string') return identity.id;
  return invocation.attachments[APPLICATION_ATTACHMENT] ?? '';
}

let lastAddress = '';
let lastHost = '';

/** The host of a remote address (`host:port`, `[v6]:port`, `injvm`); the last one is remembered. */
export function remoteHost(invocation: Invocation): string {
  const address = invocation.remoteAddress ?? '';
  if (address === lastAddress) return lastHost;
  const colon = address.lastIndexOf(':');
  const host = colon <= 0 || address.endsWith(']') ? address : address.slice(0, colon);
  lastAddress = address;
  lastHost = host;
  return host;
}

/** One leaky-bucket rate limit of one scope (`kind: 'leaky'`): the bucket a call waits its turn in. */
export interface LeakyLimiter {
  /** e.g. `service example.UserService: 50 calls/s (leaky, queue 50)`. */
  describe(invocation: Invocation): string;
  /** The bucket of this call (per application or per address for those limits). */
  bucket(invocation: Invocation): LeakyBucket;
}

function rate(limit: RateLimit | LeakyRate): string {
  return `${limit.perSecond} calls/s`;
}

type ProviderRate = NonNullable<ProviderLimits['rate']>;

/** The token-bucket limit of a rate, `undefined` for a leaky one. */
function token(limit: ProviderRate | undefined): RateLimit | undefined {
  return limit === undefined || limit.kind === 'leaky' ? undefined : limit;
}

/** The leaky-bucket limit of a rate, `undefined` for a token bucket. */
function leaky(limit: ProviderRate | undefined): LeakyRate | undefined {
  return limit?.kind === 'leaky' ? limit : undefined;
}

/** The leaky-bucket limits of a scope (`kind: 'leaky'`), for the `leaky-rate` filter. */
export function createLeakyLimiters(limits: ProviderLimits | undefined, scope: string): LeakyLimiter[] {
  const limiters: LeakyLimiter[] = [];
  const shape = (limit: LeakyRate): string => `${rate(limit)} (leaky, queue ${queueOf(limit)})`;
  const all = leaky(limits?.rate);
  if (all !== undefined) {
    const bucket = createLeakyBucket(all);
    limiters.push({ describe: () => `${scope}: ${shape(all)}`, bucket: () => bucket });
  }
  const perApplication = leaky(limits?.perApplication);
  if (perApplication !== undefined) {
    const bucketOf = createKeyedLeakyBuckets(perApplication);
    limiters.push({
      describe: (invocation) =>
        `${scope}, per application ${JSON.stringify(callerApplication(invocation))}: ${shape(perApplication)}`,
      bucket: (invocation) => bucketOf(callerApplication(invocation)),
    });
  }
  const perAddress = leaky(limits?.perAddress);
  if (perAddress !== undefined) {
    const bucketOf = createKeyedLeakyBuckets(perAddress);
    limiters.push({
      describe: (invocation) => `${scope}, per address ${remoteHost(invocation)}: ${shape(perAddress)}`,
      bucket: (invocation) => bucketOf(remoteHost(invocation)),
    });
  }
  return limiters;
}

/** The token-bucket limits of a scope, for the `rate-limit` filter (leaky ones are the `leaky-rate` filter's). */
export function createRateLimiters(limits: ProviderLimits | undefined, scope: string): RateLimiter[] {
  const limiters: RateLimiter[] = [];
  const all = token(limits?.rate);
  const perApplication = token(limits?.perApplication);
  const perAddress = token(limits?.perAddress);
  if (all) {
    const limit = all;
    const bucket = createTokenBucket(limit);
    limiters.push({
      describe: () => `${scope}: ${rate(limit)} (burst ${burstOf(limit)})`,
      take: (_invocation, now) => bucket.take(now),
    });
  }
  if (perApplication) {
    const limit = perApplication;
    const buckets = createKeyedBuckets(limit);
    limiters.push({
      describe: (invocation) =>
        `${scope}, per application ${JSON.stringify(callerApplication(invocation))}: ${rate(limit)}`,
      take: (invocation, now) => buckets.take(callerApplication(invocation), now),
    });
  }
  if (perAddress) {
    const limit = perAddress;
    const buckets = createKeyedBuckets(limit);
    limiters.push({
      describe: (invocation) => `${scope}, per address ${remoteHost(invocation)}: ${rate(limit)}`,
      take: (invocation, now) => buckets.take(remoteHost(invocation), now),
    });
  }
  return limiters;
}

export function createExecutionLimit(
  limits: ProviderLimits | undefined,
  scope: string,
): ExecutionLimit | undefined {
  return limits?.executes === undefined ? undefined : { label: scope, max: limits.executes, active: 0 };
}
