/**
 * `cache` (call, order 100, on methods with `cache: { ttlMs, max }`): the consumer's result cache of
 * idempotent reads. Answers are kept by the call's arguments as the reference's serializer writes them,
 * in an LRU with a TTL (`lru-cache`); concurrent calls with the same arguments that miss share one call
 * (single-flight: the first caller's call, whose failure they all see); failures are not kept. A call
 * made through `withOptions(ref, { cache: false })` goes past it, and its answer is not kept either.
 * Arguments larger than MAX_CACHE_KEY_BYTES serialized are not cached. A cached answer is the same object
 * for every caller: treat it as read-only.
 */
import { LRUCache } from 'lru-cache';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import type { Invocation } from '../core/invocation.js';
import { MAX_CACHE_KEY_BYTES, type ResultCacheOptions } from '../governance/cache-options.js';

/** A call that asked to go past the cache (`withOptions(ref, { cache: false })`). */
export interface CacheableInvocation extends Invocation {
  readonly noCache?: boolean | undefined;
}

/** What a result cache holds per key: the answer, boxed (so that `undefined` answers are kept too). */
interface Kept {
  readonly value: unknown;
}

export interface ResultCache {
  readonly filter: NamedFilter;
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
  const keyOf = (args: unknown[]): string | undefined => {
    const bytes = encode(args);
    if (bytes.byteLength > MAX_CACHE_KEY_BYTES) return undefined;
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  };
  const filter = defineFilter({
    name: 'cache',
    position: 'call',
    order: 100,
    filter: (next) => (invocation) => {
      if ((invocation as CacheableInvocation).noCache === true) return next(invocation);
      const key = keyOf(invocation.args);
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
    },
  });
  return {
    filter,
    get size() {
      return kept.size;
    },
  };
}
