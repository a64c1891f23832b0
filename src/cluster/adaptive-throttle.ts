/**
 * Client-side adaptive throttling (Google SRE book, "Handling Overload"), one per provider endpoint: the
 * consumer counts, over a sliding window, the attempts it made to the provider (`requests`) and those
 * the provider accepted (`accepts`: any answer that is not an overload refusal), and refuses a new
 * attempt locally with probability
 *
 *     max(0, (requests − K × accepts) / (requests + 1))
 *
 * While the provider accepts everything nothing is refused (requests ≤ K × accepts whenever K ≥ 1);
 * once it refuses more than 1 − 1/K of what it is sent (half, with K = 2), the consumer sends it only
 * about K times what it accepts and refuses the rest itself, before they cost the provider anything.
 * Locally refused attempts count as requests, so the rate sent converges to what the provider takes;
 * when it recovers, its accepts bring the refusals down. A lower K throttles sooner (1: as soon as any
 * call is refused), a higher one later.
 *
 * Nothing is refused while the window holds fewer than `minRequests` requests (default 20): with the
 * book's `+ 1` a single refusal would refuse the next attempt with probability ½, which for a quiet
 * consumer (that cannot hurt a provider much) turns one refusal into a coin toss on its next call. Twenty
 * in two minutes is one every six seconds; a consumer that sends more acts on the formula as it is.
 *
 * The window is 2 minutes in 10 s buckets by default (the SRE book's); the counters are
 * loadbalance/window-counter.ts's, O(1) and allocation-free.
 */
import { createWindowCounter, type WindowCounter } from '../loadbalance/window-counter.js';

export interface AdaptiveThrottleOptions {
  /** The sliding window, ms. Default 120000. */
  readonly windowMs: number;
  /** Buckets the window is kept in. Default 12 (10 s each). */
  readonly windowBuckets: number;
  /** Clock, ms. */
  readonly now: () => number;
  /** A uniform random number in [0, 1). Default Math.random. */
  readonly random: () => number;
  /** Requests the window must hold before anything is refused. Default 20. */
  readonly minRequests: number;
}

export const DEFAULT_ADAPTIVE_THROTTLE_OPTIONS: AdaptiveThrottleOptions = {
  windowMs: 120_000,
  windowBuckets: 12,
  now: Date.now,
  random: Math.random,
  minRequests: 20,
};

/** The default K: attempts sent per accepted one before throttling starts. */
export const DEFAULT_THROTTLE_K = 2;

export interface AdaptiveThrottle {
  /**
   * Whether to refuse an attempt locally, with multiplier `k`; a refused attempt is counted as a
   * request here (the caller records nothing more for it).
   */
  refuse(k: number): boolean;
  /** The provider answered an attempt: `accepted` false for an overload refusal. */
  record(accepted: boolean): void;
  /** The current probability of a local refusal with multiplier `k` (for metrics and tests). */
  refusalProbability(k: number): number;
}

const REQUESTS = 0;
const ACCEPTS = 1;

class WindowedThrottle implements AdaptiveThrottle {
  readonly #window: WindowCounter;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #minRequests: number;

  constructor(options: AdaptiveThrottleOptions) {
    this.#minRequests = options.minRequests;
    this.#window = createWindowCounter(options.windowMs, options.windowBuckets, 2);
    this.#now = options.now;
    this.#random = options.random;
  }

  #probability(k: number, now: number): number {
    const requests = this.#window.sum(REQUESTS, now);
    if (requests < this.#minRequests) return 0;
    const accepts = this.#window.sum(ACCEPTS, now);
    return Math.max(0, (requests - k * accepts) / (requests + 1));
  }

  refuse(k: number): boolean {
    const now = this.#now();
    const p = this.#probability(k, now);
    if (p <= 0 || this.#random() >= p) return false;
    this.#window.add(REQUESTS, 1, now);
    return true;
  }

  record(accepted: boolean): void {
    const now = this.#now();
    this.#window.add(REQUESTS, 1, now);
    if (accepted) this.#window.add(ACCEPTS, 1, now);
  }

  refusalProbability(k: number): number {
    return this.#probability(k, this.#now());
  }
}

export function createAdaptiveThrottle(options: Partial<AdaptiveThrottleOptions> = {}): AdaptiveThrottle {
  return new WindowedThrottle({ ...DEFAULT_ADAPTIVE_THROTTLE_OPTIONS, ...options });
}
