/**
 * Context across hops (docs/cluster.md): a call made while a provider method runs (in the same async
 * context, core/served-call.ts) inherits from the call being served —
 *
 * - the remaining **deadline**, less `deadlineMarginMs` (the time the served call needs to answer), when
 *   it is shorter than the call's own timeout;
 * - its **cancellation**: the served call's signal (the caller gave up, went away, or its deadline
 *   passed) cancels the nested call, on this process and on its provider;
 * - the routing **tag** (`callisto-tag`) and the **baggage**: the W3C `baggage` attachment and the
 *   `baggage-*` ones, at most `MAX_INHERITED_BAGGAGE_KEYS` keys and `MAX_INHERITED_BAGGAGE_BYTES` bytes
 *   (keys and values, UTF-8) in all; what does not fit is left behind;
 * - the **trace**: a `traceparent` with the served call's trace id (its caller's, or the one derived
 *   from its call id without an SDK) and a new span id, and its `tracestate`;
 * - the **retry marker** (`callisto-retry`, cluster/retry-layer.ts): a call made while serving a retry
 *   is not retried.
 *
 * Each is switched per reference (`inheritDeadline`, `inheritCancellation`, `inheritTag`,
 * `inheritBaggage`, `inheritTrace`, `inheritRetry`). The call's own attachments, timeout and signal
 * come on top. Nothing is inherited once the served call ended (its deadline and cancellation: work
 * a method left running after it answered is not cut short). Outside a provider method nothing
 * happens: the proxy reads one variable and one AsyncLocalStorage, if the process has one.
 */
import { setMaxListeners } from 'node:events';
import { RETRY_ATTACHMENT } from '../cluster/retry-layer.js';
import { tickNow } from '../core/clock.js';
import type { Attachments, Invocation } from '../core/invocation.js';
import {
  childTraceparent,
  parseTraceparent,
  TRACEPARENT,
  TRACESTATE,
  traceIdOfCallId,
} from '../observability/trace-context.js';
import type { ConsumerConfig } from './consumer-options.js';

/** The attachment the routing tag travels in (the routing stage reads it, docs/routing.md). */
export const TAG_ATTACHMENT = 'callisto-tag';
/** The W3C baggage attachment (header). */
export const BAGGAGE_ATTACHMENT = 'baggage';
/** User baggage attachments: every key with this prefix is inherited (within the bounds). */
export const BAGGAGE_PREFIX = 'baggage-';
/** The most baggage keys (`baggage` and `baggage-*`) a nested call inherits. */
export const MAX_INHERITED_BAGGAGE_KEYS = 16;
/** The most bytes of baggage (keys and values, UTF-8) a nested call inherits. */
export const MAX_INHERITED_BAGGAGE_BYTES = 4096;

/** What a reference's calls inherit (its `inherit*` options and `deadlineMarginMs`). */
export interface HopPolicy {
  readonly deadline: boolean;
  readonly marginMs: number;
  readonly cancellation: boolean;
  readonly tag: boolean;
  readonly baggage: boolean;
  readonly trace: boolean;
  readonly retry: boolean;
}

type HopKeys =
  | 'inheritDeadline'
  | 'deadlineMarginMs'
  | 'inheritCancellation'
  | 'inheritTag'
  | 'inheritBaggage'
  | 'inheritTrace'
  | 'inheritRetry';

/** A reference's policy, or undefined when it inherits nothing (then the proxy does not even look). */
export function hopPolicyOf(config: Pick<ConsumerConfig, HopKeys>): HopPolicy | undefined {
  const policy: HopPolicy = {
    deadline: config.inheritDeadline,
    marginMs: config.deadlineMarginMs,
    cancellation: config.inheritCancellation,
    tag: config.inheritTag,
    baggage: config.inheritBaggage,
    trace: config.inheritTrace,
    retry: config.inheritRetry,
  };
  const any =
    policy.deadline || policy.cancellation || policy.tag || policy.baggage || policy.trace || policy.retry;
  return any ? policy : undefined;
}

/** Whether a reference made with `options` over the app's `consumer` config inherits anything. */
export function inheritsAnything(
  appConsumer: Pick<ConsumerConfig, HopKeys>,
  options: Partial<Pick<ConsumerConfig, HopKeys>> | undefined,
): boolean {
  return hopPolicyOf({ ...appConsumer, ...definedOnly(options) }) !== undefined;
}

function definedOnly<T extends object>(options: T | undefined): Partial<T> {
  if (options === undefined) return {};
  const out: Partial<T> = {};
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/** A served call, as the provider's invocation shows it (`ended` once it answered). */
interface Served extends Invocation {
  readonly ended?: boolean;
}

/** The call-long parts of a nested call that inheritance may change. */
export interface HopCall {
  readonly attachments: Attachments;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
}

/** What a nested call is made with: `call` with what it inherits from `served`. */
export interface InheritedCall extends HopCall {
  /** The served call is a retry (its `callisto-retry`), and the policy inherits it: one attempt only. */
  readonly underRetry: boolean;
}

/** `call`'s attachments, timeout and signal with what it inherits from the call being served. */
export function inherit(served: Invocation, call: HopCall, policy: HopPolicy): InheritedCall {
  const from = served as Served;
  const live = from.ended !== true;
  let timeoutMs = call.timeoutMs;
  if (policy.deadline && live && from.deadline > 0) {
    const remaining = Math.max(1, from.deadline - tickNow() - policy.marginMs);
    if (timeoutMs === 0 || remaining < timeoutMs) timeoutMs = remaining;
  }
  let signal = call.signal;
  if (policy.cancellation && live) {
    const servedSignal = from.signal;
    if (servedSignal !== undefined) {
      // each nested call in flight listens to it: a method that fans out is not a listener leak
      setMaxListeners(0, servedSignal);
      signal = signal === undefined ? servedSignal : AbortSignal.any([signal, servedSignal]);
    }
  }
  const source = from.attachments;
  const inherited: Attachments = {};
  let underRetry = false;
  let baggageKeys = 0;
  let baggageBytes = 0;
  for (const key in source) {
    const value = source[key]!;
    if (key === TAG_ATTACHMENT) {
      if (policy.tag) inherited[key] = value;
    } else if (key === BAGGAGE_ATTACHMENT || key.startsWith(BAGGAGE_PREFIX)) {
      if (!policy.baggage || baggageKeys >= MAX_INHERITED_BAGGAGE_KEYS) continue;
      const bytes = Buffer.byteLength(key) + Buffer.byteLength(value);
      if (baggageBytes + bytes > MAX_INHERITED_BAGGAGE_BYTES) continue;
      baggageKeys++;
      baggageBytes += bytes;
      inherited[key] = value;
    } else if (key === RETRY_ATTACHMENT) {
      if (policy.retry) {
        inherited[key] = value;
        underRetry = true;
      }
    } else if (key === TRACESTATE) {
      if (policy.trace) inherited[key] = value;
    }
  }
  if (policy.trace) {
    const parent = parseTraceparent(source[TRACEPARENT]);
    const traceId = parent?.traceId ?? (from.callId ? traceIdOfCallId(from.callId) : undefined);
    if (traceId !== undefined) inherited[TRACEPARENT] = childTraceparent(traceId, parent?.flags ?? '00');
  }
  return { attachments: { ...inherited, ...call.attachments }, timeoutMs, signal, underRetry };
}
