/**
 * The provider's adaptive concurrency limit: how many calls it may have in flight, learnt from latency
 * (docs/operations.md, "Overload protection"). Gradient2-style, as in Netflix's concurrency-limits:
 *
 *   gradient = clamp((rttTolerance × longRtt + rttSlackMs) / shortRtt, 0.5, 1)
 *   limit    = limit × (1 − smoothing) + (base × gradient + √base) × smoothing,  in [minLimit, maxLimit]
 *
 * `shortRtt` is the mean latency of the calls that ended in the last window (at least `windowSamples`
 * calls and `windowMs`), plus the event loop's delay over it (the time a request waits before it is even
 * read: what a caller sees besides the provider's own latency). `longRtt` is an exponential average of
 * the windows' `shortRtt` over about `longWindows` windows, started from the first window's fastest call
 * (that window may already be a queue): the latency the provider has when it is not queueing. While the short latency stays within the tolerance (1.5× the long one, plus a slack of a few
 * ms below which queueing is not worth refusing for) the gradient is 1 and the limit grows by √limit
 * (smoothed) per window — only while the calls in flight reached half of it (a limit nobody uses is not
 * evidence of capacity); when calls queue the gradient falls towards 0.5 and the limit shrinks.
 *
 * `base` is the limit, or, when it shrinks, the most calls that were in flight in the window if fewer:
 * a limit of 10 000 that was never used drops at once to what the provider actually had in flight when
 * its latency rose, so a high initial limit costs nothing and a fresh provider is never throttled before
 * it has shown it is overloaded. When the long latency is more than twice the short one (the provider
 * recovered from a long overload) it is pulled down by 5 % per window, as Gradient2 does.
 *
 * Cost per call: a few additions and a comparison (`record`); the arithmetic runs once per window.
 */

export interface AdaptiveLimitOptions {
  /** The limit before anything was learnt. Default 10000 (the static `maxConcurrentCalls`'s default). */
  readonly initialLimit: number;
  /** The limit never goes below it. Default 20. */
  readonly minLimit: number;
  /** The limit never goes above it. Default 10000. */
  readonly maxLimit: number;
  /** Weight of each window's new limit, (0, 1]. Default 0.2. */
  readonly smoothing: number;
  /** How much slower than the long latency the short one may be before the limit shrinks. Default 1.5. */
  readonly rttTolerance: number;
  /** Queueing below this many ms is not overload. Default 20. */
  readonly rttSlackMs: number;
  /** A window lasts at least this long, ms. Default 100. */
  readonly windowMs: number;
  /** A window holds at least this many calls. Default 10. */
  readonly windowSamples: number;
  /** The long latency averages over about this many windows. Default 100. */
  readonly longWindows: number;
}

export const DEFAULT_ADAPTIVE_LIMIT_OPTIONS: AdaptiveLimitOptions = {
  initialLimit: 10_000,
  minLimit: 20,
  maxLimit: 10_000,
  smoothing: 0.2,
  rttTolerance: 1.5,
  rttSlackMs: 20,
  windowMs: 100,
  windowSamples: 10,
  longWindows: 100,
};

export interface AdaptiveLimit {
  /** The current limit (a whole number). */
  readonly limit: number;
  /** The last window's latency, ms (0 before the first). */
  readonly shortRttMs: number;
  /** The long-term latency, ms (0 before the first window). */
  readonly longRttMs: number;
  /** The latency the limit tolerates before it shrinks: rttTolerance × longRtt + rttSlackMs, ms. */
  readonly targetRttMs: number;
  /** Brings the limit down to `limit` at once if it is higher (never below minLimit). */
  capAt(limit: number): void;
  /** Calls in flight now (a call was admitted): the limit keeps the most it saw in a window. */
  inflight(count: number): void;
  /**
   * A call ended after `rttMs` with `inflight` calls in flight (itself included); `nowMs` is the
   * monotonic time. May close the window and move the limit.
   */
  record(rttMs: number, inflight: number, nowMs: number): void;
}

class Gradient2 implements AdaptiveLimit {
  readonly #o: AdaptiveLimitOptions;
  readonly #extraDelayMs: () => number;
  #estimate: number;
  limit: number;
  shortRttMs = 0;
  longRttMs = 0;
  #windowStart = Number.NaN;
  #sum = 0;
  #count = 0;
  #peak = 0;
  #min = Number.POSITIVE_INFINITY;

  constructor(options: AdaptiveLimitOptions, extraDelayMs: () => number) {
    this.#o = options;
    this.#extraDelayMs = extraDelayMs;
    this.#estimate = clamp(options.initialLimit, options.minLimit, options.maxLimit);
    this.limit = Math.floor(this.#estimate);
  }

  get targetRttMs(): number {
    return this.#o.rttTolerance * this.longRttMs + this.#o.rttSlackMs;
  }

  inflight(count: number): void {
    if (count > this.#peak) this.#peak = count;
  }

  capAt(limit: number): void {
    const capped = clamp(limit, this.#o.minLimit, this.#o.maxLimit);
    if (capped >= this.#estimate) return;
    this.#estimate = capped;
    this.limit = Math.floor(capped);
  }

  record(rttMs: number, inflight: number, nowMs: number): void {
    if (Number.isNaN(this.#windowStart)) this.#windowStart = nowMs;
    this.#sum += rttMs;
    this.#count++;
    if (rttMs < this.#min) this.#min = rttMs;
    if (inflight > this.#peak) this.#peak = inflight;
    if (this.#count >= this.#o.windowSamples && nowMs - this.#windowStart >= this.#o.windowMs) {
      const delayMs = Math.max(0, this.#extraDelayMs());
      this.#update(this.#sum / this.#count + delayMs, this.#min + delayMs);
      this.#windowStart = nowMs;
      this.#sum = 0;
      this.#count = 0;
      this.#peak = inflight;
      this.#min = Number.POSITIVE_INFINITY;
    }
  }

  #update(shortRtt: number, fastest: number): void {
    const o = this.#o;
    this.shortRttMs = shortRtt;
    // the first window may already be a queue: the long latency starts from its fastest call
    this.longRttMs =
      this.longRttMs === 0 ? fastest : this.longRttMs + (shortRtt - this.longRttMs) / o.longWindows;
    if (this.longRttMs > 2 * shortRtt) this.longRttMs *= 0.95;
    const allowed = o.rttTolerance * this.longRttMs + o.rttSlackMs;
    const gradient = shortRtt <= 0 ? 1 : Math.max(0.5, Math.min(1, allowed / shortRtt));
    let estimate = this.#estimate;
    if (gradient >= 1) {
      // latency flat: grow, but only a limit that is being used
      if (this.#peak < estimate / 2) return;
      estimate = estimate * (1 - o.smoothing) + (estimate + Math.sqrt(estimate)) * o.smoothing;
    } else {
      const base = Math.min(estimate, Math.max(this.#peak, o.minLimit));
      estimate = base * (1 - o.smoothing) + (base * gradient + Math.sqrt(base)) * o.smoothing;
    }
    this.#estimate = clamp(estimate, o.minLimit, o.maxLimit);
    this.limit = Math.floor(this.#estimate);
  }
}

const clamp = (value: number, min: number, max: number): number => Math.max(min, Math.min(max, value));

/** `extraDelayMs`: added to each window's latency (the event loop's delay); default none. */
export function createAdaptiveLimit(
  options: Partial<AdaptiveLimitOptions> = {},
  extraDelayMs: () => number = () => 0,
): AdaptiveLimit {
  return new Gradient2({ ...DEFAULT_ADAPTIVE_LIMIT_OPTIONS, ...options }, extraDelayMs);
}
