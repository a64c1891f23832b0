/**
 * Token buckets (rate limits, docs/governance.md): `perSecond` tokens a second, at most `burst` saved up;
 * a call takes one or is told how long until one is there (its retry-after hint). No timer: the bucket
 * refills from the time that passed when it is asked, so an idle bucket costs nothing.
 */

export interface TokenBucket {
  /** Takes a token at `nowMs`: 0 when taken, else the milliseconds until one is there. */
  take(nowMs: number): number;
}

export interface RateLimit {
  /** Calls a second, more than 0 (fractions allowed: 0.5 is one call every 2 s). */
  readonly perSecond: number;
  /** Calls that may come at once after a quiet period. Default: perSecond rounded up, at least 1. */
  readonly burst?: number | undefined;
}

/** The burst of a limit: its own, else perSecond rounded up (at least 1). */
export function burstOf(limit: RateLimit): number {
  return limit.burst ?? Math.max(1, Math.ceil(limit.perSecond));
}

class Bucket implements TokenBucket {
  #tokens: number;
  #last = -1;
  readonly #perMs: number;
  readonly #burst: number;

  constructor(perSecond: number, burst: number) {
    this.#perMs = perSecond / 1000;
    this.#burst = burst;
    this.#tokens = burst;
  }

  take(nowMs: number): number {
    if (this.#last >= 0 && nowMs > this.#last) {
      const tokens = this.#tokens + (nowMs - this.#last) * this.#perMs;
      this.#tokens = Math.min(tokens, this.#burst);
    }
    if (nowMs > this.#last) this.#last = nowMs;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.#perMs));
  }
}

export function createTokenBucket(limit: RateLimit): TokenBucket {
  return new Bucket(limit.perSecond, burstOf(limit));
}

/** Keys a keyed limit tracks at most; beyond it the oldest key's bucket is dropped (it starts full again). */
export const MAX_LIMIT_KEYS = 10_000;

/**
 * One bucket per key (a caller's application, a remote host), at most `maxKeys` of them, so a caller
 * that invents keys costs bounded memory: past the bound the key tracked longest is dropped.
 */
export interface KeyedBuckets {
  take(key: string, nowMs: number): number;
  /** Keys tracked now (tests). */
  readonly size: number;
}

export function createKeyedBuckets(limit: RateLimit, maxKeys = MAX_LIMIT_KEYS): KeyedBuckets {
  const buckets = new Map<string, TokenBucket>();
  return {
    take(key, nowMs) {
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
        bucket = createTokenBucket(limit);
        buckets.set(key, bucket);
      }
      return bucket.take(nowMs);
    },
    get size() {
      return buckets.size;
    },
  };
}
