/**
 * Leaky buckets (`limits.rate: { kind: 'leaky', perSecond, queue }`, docs/governance.md): calls leave at
 * a steady rate, one every `1000 / perSecond` ms; a call that comes while the last one left less than
 * that ago waits for its turn, at most `queue` calls wait at once, and a call beyond them is refused.
 * Where a token bucket lets a burst through at once and refuses what follows, a leaky bucket smooths it.
 * No timer of its own: the bucket keeps the time its next call may leave, and a call is told how long
 * to wait.
 */

export interface LeakyRate {
  readonly kind: 'leaky';
  /** Calls a second, more than 0 (fractions allowed: 0.5 is one call every 2 s). */
  readonly perSecond: number;
  /** Calls that may wait for their turn at once. Default: perSecond rounded up, at least 1. */
  readonly queue?: number | undefined;
}

/** The queue of a leaky limit: its own, else perSecond rounded up (at least 1). */
export function queueOf(limit: LeakyRate): number {
  return limit.queue ?? Math.max(1, Math.ceil(limit.perSecond));
}

export interface LeakyBucket {
  /** Whether a call at `nowMs` would leave at once or find a place in the queue. */
  hasRoom(nowMs: number): boolean;
  /**
   * Books the next turn for a call at `nowMs` (call `hasRoom` first): the milliseconds it waits, 0 to
   * leave at once.
   */
  book(nowMs: number): number;
}

class Bucket implements LeakyBucket {
  /** When the next call may leave (ms, the caller's clock). */
  #next = Number.NEGATIVE_INFINITY;
  readonly #spacingMs: number;
  readonly #queue: number;

  constructor(perSecond: number, queue: number) {
    this.#spacingMs = 1000 / perSecond;
    this.#queue = queue;
  }

  hasRoom(nowMs: number): boolean {
    if (this.#next <= nowMs) return true;
    // the calls booked to leave after now (one every spacing, the last one at next - spacing) wait
    const waiting = Math.ceil((this.#next - nowMs) / this.#spacingMs - 1e-9) - 1;
    return waiting < this.#queue;
  }

  book(nowMs: number): number {
    const at = Math.max(nowMs, this.#next);
    this.#next = at + this.#spacingMs;
    return at - nowMs;
  }
}

export function createLeakyBucket(limit: LeakyRate): LeakyBucket {
  return new Bucket(limit.perSecond, queueOf(limit));
}

/** Keys a keyed leaky limit tracks at most; beyond it the oldest key's bucket is dropped. */
export const MAX_LEAKY_KEYS = 10_000;

/** One leaky bucket per key (a caller's application, a remote host), at most `maxKeys` of them. */
export function createKeyedLeakyBuckets(
  limit: LeakyRate,
  maxKeys = MAX_LEAKY_KEYS,
): (key: string) => LeakyBucket {
  const buckets = new Map<string, LeakyBucket>();
  return (key) => {
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
      bucket = createLeakyBucket(limit);
      buckets.set(key, bucket);
    }
    return bucket;
  };
}
