/**
 * A method's expected service time, learnt from its recent calls, for deadline-aware admission (the
 * provider's `deadline` filter, docs/operations.md "Overload protection"): a call whose remaining
 * budget is smaller than it cannot be answered in time, so it is refused before anything is done.
 *
 * The estimate is a low percentile (`quantile`, default the 10th) of the last `samples` durations
 * (default 32) no older than `maxAgeMs` (default 10 s), and none until `minSamples` (default 16) of
 * them are there. Why a low percentile and not a mean or an EWMA: a refusal must be a call that could
 * not have made it even served as fast as the method usually is. A mean is pulled up by the slow tail
 * (a GC pause, a large argument, a queue that formed for a moment) and would refuse calls that would
 * have been answered in time; a low percentile moves only when most calls got slower. Fast-moving: the
 * window is the last 32 calls, so a method that became slower or faster is followed within ~30 calls.
 * The age limit keeps it from sticking: if every call is refused (no new samples), the old samples
 * expire and calls are admitted again, which teaches it the method's speed as it is now.
 *
 * A probe keeps it from sticking sooner: while it refuses every call, one call every `probeEveryMs`
 * (100 ms, counted from the first refusal) is admitted anyway (`admits`), so that the method's speed as it is now keeps being measured —
 * once an overload is over (or bounded by the adaptive limit), a few fast probes bring the low
 * percentile down within a second or two instead of the 10 s the old samples take to expire.
 *
 * Cost: one array write per sample; the percentile is recomputed (a sort of at most 32 numbers) only
 * when asked after 8 new samples (after each one while there is no estimate) or after `maxAgeMs / 4`.
 */

export interface ServiceTimeOptions {
  /** Recent durations kept. Default 32. */
  readonly samples: number;
  /** Samples needed before there is an estimate (until then every call is admitted). Default 16. */
  readonly minSamples: number;
  /** The percentile taken, (0, 1). Default 0.1. */
  readonly quantile: number;
  /** Samples older than this no longer count, ms. Default 10000. */
  readonly maxAgeMs: number;
  /** While every call is refused, one is admitted anyway this often, ms. Default 100. */
  readonly probeEveryMs: number;
}

export const DEFAULT_SERVICE_TIME_OPTIONS: ServiceTimeOptions = {
  samples: 32,
  minSamples: 16,
  quantile: 0.1,
  maxAgeMs: 10_000,
  probeEveryMs: 100,
};

/** How many new samples make the estimate stale. */
const RECOMPUTE_AFTER = 8;

export interface ServiceTime {
  /**
   * A call of the method took `durationMs`; `nowMs` is the monotonic time it ended; `busy`: whether
   * the provider's event loop was busy then (its time may hold a queue for the CPU).
   */
  record(durationMs: number, nowMs: number, busy?: boolean): void;
  /** Whether most of the samples in the window were taken while the event loop was busy. */
  learntBusy(): boolean;
  /** The expected service time, ms, at monotonic time `nowMs`; 0 while there are too few samples. */
  expectedMs(nowMs: number): number;
  /**
   * Whether a call with `remainingMs` of budget is admitted at `nowMs`: when it is at least the
   * expected service time, or as a probe (every `probeEveryMs` while every call is refused).
   */
  admits(remainingMs: number, nowMs: number): boolean;
}

class ServiceTimeWindow implements ServiceTime {
  readonly #options: ServiceTimeOptions;
  readonly #durations: Float64Array;
  readonly #times: Float64Array;
  readonly #busy: Uint8Array;
  /** The recent durations, sorted in place when the estimate is recomputed (no array per recompute). */
  readonly #scratch: Float64Array;
  /** How many of the filled samples were taken while the loop was busy. */
  #busyCount = 0;
  #next = 0;
  #filled = 0;
  #fresh = 0;
  #estimate = 0;
  #computedAt = Number.NEGATIVE_INFINITY;
  /** When the estimate started refusing every call (NaN: it admitted the last one). */
  #refusingSince = Number.NaN;

  constructor(options: ServiceTimeOptions) {
    this.#options = options;
    this.#durations = new Float64Array(options.samples);
    this.#times = new Float64Array(options.samples);
    this.#busy = new Uint8Array(options.samples);
    this.#scratch = new Float64Array(options.samples);
  }

  record(durationMs: number, nowMs: number, busy = false): void {
    const flag = busy ? 1 : 0;
    if (this.#filled === this.#options.samples) this.#busyCount -= this.#busy[this.#next]!;
    this.#busy[this.#next] = flag;
    this.#busyCount += flag;
    this.#durations[this.#next] = durationMs;
    this.#times[this.#next] = nowMs;
    this.#next = (this.#next + 1) % this.#options.samples;
    if (this.#filled < this.#options.samples) this.#filled++;
    this.#fresh++;
  }

  learntBusy(): boolean {
    return this.#filled > 0 && 2 * this.#busyCount > this.#filled;
  }

  expectedMs(nowMs: number): number {
    const { maxAgeMs } = this.#options;
    const stale =
      this.#fresh >= RECOMPUTE_AFTER ||
      // without an estimate yet, every new sample may be the one that makes enough
      (this.#estimate === 0 && this.#fresh > 0) ||
      nowMs - this.#computedAt >= maxAgeMs / 4;
    if (stale) this.#compute(nowMs);
    return this.#estimate;
  }

  admits(remainingMs: number, nowMs: number): boolean {
    if (remainingMs >= this.expectedMs(nowMs)) {
      this.#refusingSince = Number.NaN;
      return true;
    }
    // refusing: since when (the first refusal after an admitted call), and a probe every probeEveryMs
    if (Number.isNaN(this.#refusingSince)) this.#refusingSince = nowMs;
    if (nowMs - this.#refusingSince < this.#options.probeEveryMs) return false;
    this.#refusingSince = nowMs;
    return true;
  }

  #compute(nowMs: number): void {
    const { maxAgeMs, minSamples, quantile } = this.#options;
    this.#fresh = 0;
    this.#computedAt = nowMs;
    const scratch = this.#scratch;
    let count = 0;
    for (let i = 0; i < this.#filled; i++) {
      if (nowMs - this.#times[i]! <= maxAgeMs) scratch[count++] = this.#durations[i]!;
    }
    if (count < minSamples) {
      this.#estimate = 0;
      return;
    }
    // a typed array sorts numerically in native code: no comparator called from it (it was a fifth of
    // a microsecond per call, amortized, with a JS array and a comparator)
    const recent = scratch.subarray(0, count).sort();
    this.#estimate = recent[Math.floor(quantile * (count - 1))]!;
  }
}

export function createServiceTime(options: Partial<ServiceTimeOptions> = {}): ServiceTime {
  return new ServiceTimeWindow({ ...DEFAULT_SERVICE_TIME_OPTIONS, ...options });
}
