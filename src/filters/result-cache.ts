/**
 * `cache` (call, on methods with `cache: { ttlMs, max, varyBy }`): the consumer's result
 * cache of idempotent reads. Answers are kept by caller and arguments: the call's own credentials (the
 * `authorization` attachment a call made through `withOptions(ref, { credentials })` carries; the
 * reference's and the app's are added per attempt, after the cache, and are the same for every call)
 * and the attachments `varyBy` names, as one SHA-256 digest (credentials are never kept in clear), then
 * the arguments as the reference's serializer writes them; so one caller never reads another's answer.
 * An LRU with a TTL (`lru-cache`); concurrent calls with the same key that miss share one call
 * (single-flight: the first caller's call, whose failure they all see); failures are not kept. A call
 * made through `withOptions(ref, { cache: false })` goes past it, and its answer is not kept either.
 * Arguments larger than MAX_CACHE_KEY_BYTES serialized are not cached. A cached answer is the same object
 * for every caller: treat it as read-only.
 */

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { asInvoker, defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Attachments, Invocation } from '../core/invocation.js';
import { MAX_CACHE_KEY_BYTES, type ResultCacheOptions } from '../governance/cache-options.js';
import { AUTH_ATTACHMENT } from '../security/authenticator.js';

/** A call that asked to go past the cache (`withOptions(ref, { cache: false })`). */
export interface CacheableInvocation extends Invocation {
  readonly noCache?: boolean | undefined;
}

/** What a result cache holds per key: the answer, boxed (so that `undefined` answers are kept too). */
interface Kept {
  readonly value: unknown;
}

export interface ResultCache {
  readonly filter: NamedFilter<CacheableInvocation>;
  /** Answers kept now (tests, admin). */
  readonly size: number;
}

export function createResultCache(
  options: ResultCacheOptions,
  /** The arguments as bytes: the reference's serializer. */
  encode: (args: unknown[]) => Uint8Array,
): ResultCache {
  const kept = new LRUCache<string, Kept>({ max: options.max, ttl: options.ttlMs, ttlAutopurge: false });
  const pending = new Map<string, Promise<unknown>>();
  const varyBy = [AUTH_ATTACHMENT, ...(options.varyBy ?? []).filter((name) => name !== AUTH_ATTACHMENT)];
  /** Per attachments object (one per reference view, made once): whose answers its calls get. */
  const callers = new WeakMap<Attachments, string>();
  const callerOf = (attachments: Attachments): string => {
    let caller = callers.get(attachments);
    if (caller === undefined) {
      const values = varyBy.map((name) => attachments[name] ?? null);
      // base64 never holds '|': a key with a caller and one without can never be equal
      caller = values.every((value) => value === null)
        ? ''
        : createHash('sha256').update(JSON.stringify(values)).digest('base64');
      // a frozen object (every reference view's) cannot change under the memo
      if (Object.isFrozen(attachments)) callers.set(attachments, caller);
    }
    return caller;
  };
  const keyOf = (invocation: Invocation): string | undefined => {
    const bytes = encode(invocation.args);
    if (bytes.byteLength > MAX_CACHE_KEY_BYTES) return undefined;
    const args = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    return `${callerOf(invocation.attachments)}|${args}`;
  };
  const filter = defineFilter<CacheableInvocation>({
    name: 'cache',
    position: 'call',
    order: FILTER_ORDER.call.cache,
    // answers with a promise, hit or miss, as the per-call chain does
    step: (rest) => {
      const next = asInvoker(rest);
      return (invocation) => {
        if (invocation.noCache === true) return next(invocation);
        const key = keyOf(invocation);
        if (key === undefined) return next(invocation);
        const hit = kept.get(key);
        if (hit !== undefined) return Promise.resolve(hit.value);
        const shared = pending.get(key);
        if (shared !== undefined) return shared;
        const call = next(invocation).then(
          (value) => {
            pending.delete(key);
            kept.set(key, { value });
            return value;
          },
          (error: unknown) => {
            pending.delete(key);
            throw error;
          },
        );
        pending.set(key, call);
        return call;
      };
    },
  });
  return {
    filter,
    get size() {
      return kept.size;
    },
  };
}
