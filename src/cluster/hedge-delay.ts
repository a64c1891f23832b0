/**
 * How long a hedged call waits before its second attempt: a fixed delay, or the method's observed
 * latency at a percentile — over its last `HEDGE_SAMPLES` answered attempts (an attempt cancelled
 * because the other answered first is left out: its latency is unknown, and counting the time it had
 * taken would feed the hedges' own delays back into the percentile), recomputed every `RECOMPUTE_EVERY` observations, so reading it costs nothing per
 * call. Until `MIN_HEDGE_SAMPLES` latencies were seen there is no delay: calls are not hedged.
 */

/** Latencies kept per method. */
export const HEDGE_SAMPLES = 512;
/** Latencies seen before a percentile delay is given. */
export const MIN_HEDGE_SAMPLES = 20;
const RECOMPUTE_EVERY = 16;

export interface HedgeDelay {
  /** Records one attempt's latency, ms. */
  observe(ms: number): void;
  /** The wait before hedging, ms, or undefined (not hedged yet). */
  delayMs(): number | undefined;
}

export interface HedgeDelayOptions {
  /** > 0: this fixed delay; 0: the observed latency at `percentile`. */
  readonly fixedMs: number;
  /** 50–99.9. */
  readonly percentile: number;
}

export function createHedgeDelay(options: HedgeDelayOptions): HedgeDelay {
  if (options.fixedMs > 0) return { observe() {}, delayMs: () => options.fixedMs };
  const samples = new Float64Array(HEDGE_SAMPLES);
  let seen = 0;
  let current: number | undefined;
  const recompute = () => {
    const filled = Math.min(seen, HEDGE_SAMPLES);
    const sorted = samples.slice(0, filled).sort();
    const rank = Math.min(filled - 1, Math.ceil((options.percentile / 100) * filled) - 1);
    current = Math.max(1, Math.ceil(sorted[Math.max(0, rank)]!));
  };
  return {
    observe(ms) {
      samples[seen % HEDGE_SAMPLES] = ms;
      seen++;
      if (seen >= MIN_HEDGE_SAMPLES && (current === undefined || seen % RECOMPUTE_EVERY === 0)) recompute();
    },
    delayMs: () => current,
  };
}
