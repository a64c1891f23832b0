/**
 * The options of a method's result cache (docs/governance.md): `cache: { ttlMs, max }` on a method's
 * declaration (`defineService`) or on a reference's method (`refer(def, { methods: { m: { cache } } })`).
 * Only for idempotent reads: a method that is not declared idempotent (or is one-way) with a cache is
 * refused where it is declared, at compile time for a declaration (`idempotent: true` must be written
 * beside `cache`) and always at run time with a ConfigError.
 */
import { z } from 'zod';
import { ConfigError } from '../config/config-error.js';

export const resultCacheSchema = z
  .strictObject({
    /** How long an answer is reused, ms. */
    ttlMs: z.number().int().positive(),
    /** Answers kept at most (least recently used dropped first). */
    max: z.number().int().positive(),
  })
  .describe('{ ttlMs: an integer > 0, max: an integer > 0 }');

export type ResultCacheOptions = z.infer<typeof resultCacheSchema>;

/** Arguments larger than this, serialized, are not cached (the key would cost more than it saves). */
export const MAX_CACHE_KEY_BYTES = 16 * 1024;

/** Throws a ConfigError unless a method with a cache is idempotent and not one-way. */
export function checkCacheable(
  key: string,
  cache: unknown,
  method: { readonly idempotent?: boolean | undefined; readonly oneway?: boolean | undefined },
  source: string,
): void {
  if (cache === undefined) return;
  if (method.idempotent !== true || method.oneway === true) {
    throw new ConfigError(key, cache, 'a cache only on an idempotent method (idempotent: true, not oneway)', {
      source,
      problem: method.oneway
        ? 'a one-way method has no answer to cache'
        : 'a cached answer would replace a call that changes something; declare the method idempotent: true if it is a read',
    });
  }
}
