/**
 * The provider's limiters of one scope (the app, a service, a method), built once from its
 * `ProviderLimits` (limit-options.ts): the rate limits as token buckets, `executes` as a counter. The
 * `rate-limit` and `executes` filters (src/filters/) run the limiters of a method's scopes in order.
 */
import type { Invocation } from '../core/invocation.js';
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

function rate(limit: RateLimit): string {
  return `${limit.perSecond} calls/s`;
}

export function createRateLimiters(limits: ProviderLimits | undefined, scope: string): RateLimiter[] {
  const limiters: RateLimiter[] = [];
  if (limits?.rate) {
    const limit = limits.rate;
    const bucket = createTokenBucket(limit);
    limiters.push({
      describe: () => `${scope}: ${rate(limit)} (burst ${burstOf(limit)})`,
      take: (_invocation, now) => bucket.take(now),
    });
  }
  if (limits?.perApplication) {
    const limit = limits.perApplication;
    const buckets = createKeyedBuckets(limit);
    limiters.push({
      describe: (invocation) =>
        `${scope}, per application ${JSON.stringify(callerApplication(invocation))}: ${rate(limit)}`,
      take: (invocation, now) => buckets.take(callerApplication(invocation), now),
    });
  }
  if (limits?.perAddress) {
    const limit = limits.perAddress;
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
