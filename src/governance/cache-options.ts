/**
 * The options of a method's result cache (docs/governance.md): `cache: { ttlMs, max, varyBy }` on a
 * method's declaration (`defineService`) or on a reference's method
 * (`refer(def, { methods: { m: { cache } } })`). Answers are kept per caller: the call's own credentials
 * (`withOptions(ref, { credentials })`) are always part of the key, hashed; `varyBy` names the
 * attachments whose value is also part of it (a tenant header).
 * Only for idempotent reads: a method that is not declared idempotent (or is one-way) with a cache is
 * refused where it is declared, at compile time for a declaration (`idempotent: true` must be written
 * beside `cache`) and always at run time with a ConfigError.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';

/** An attachment name `varyBy` may name. */
const ATTACHMENT_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Attachments a cache may vary by, at most. */
export const MAX_VARY_BY = 16;

export const resultCacheSchema = z
  .strictObject({
    /** How long an answer is reused, ms. */
    ttlMs: z.number().int().positive(),
    /** Answers kept at most (least recently used dropped first). */
    max: z.number().int().positive(),
    /**
     * Attachments whose value is part of the key (the answer depends on them, e.g. a tenant), besides
     * the call's own credentials, which always are. Default none.
     */
    varyBy: z
      .array(
        z
          .string()
          .regex(ATTACHMENT_NAME)
          .describe('an attachment name (letters, digits, - _ . :, at most 64 characters)'),
      )
      .max(MAX_VARY_BY)
      .describe(`a list of at most ${MAX_VARY_BY} attachment names`)
      .optional(),
  })
  .describe('{ ttlMs: an integer > 0, max: an integer > 0, varyBy?: attachment names }');

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
