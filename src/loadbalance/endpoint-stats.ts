/**
 * The live counters behind `EndpointStats`, one per provider, kept by the cluster layer on every call:
 * `begin()` when a call is sent, `end()` when it completes, `recordLatency()` for heartbeat round trips.
 * Samples live in a fixed ring (the last `windowSize`), and samples older than `windowMs` no longer count,
 * so a provider that was slow a minute ago is not judged by it forever. Every operation is O(1)
 * (amortized) and allocates nothing: this sits on the hot path.
 *
 * Latency is averaged over successful calls and heartbeat samples only: a call that failed fast (connection
 * refused) would otherwise make a broken provider look like the fastest one.
 *
 * Each call's outcome also moves the provider's learnt weight factor (effective-weight.ts), which is not
 * windowed: it moves only with calls.
 *
 * Beside the window, a **peak EWMA** of the successful calls' latency (Finagle's and linkerd's
 * `PeakEwma`): a sample above it replaces it at once (a provider that became slow is seen slow from its
 * first slow answer), one below pulls it down with weight `1 − e^(−Δt/peakDecayMs)` for the time Δt
 * since the last sample, and a read decays it towards 0 for the time since the last sample (a provider
 * nobody picked because it looked slow is tried again after a few decay periods). And the last load the
 * provider reported (load-report.ts), kept as it came.
 */
import { ConfigError } from '../core/config-error.js';
import { nextWeightFactor } from './effective-weight.js';
import type { EndpointStats } from './load-balancer.js';
import { parseLoad, type ReportedLoad } from './load-report.js';

export interface EndpointStatsOptions {
  /** How many recent samples the window holds. Default 64. */
  windowSize: number;
  /** Samples older than this many ms are dropped; 0 keeps them until overwritten. Default 10000. */
  windowMs: number;
  /**
   * Reads consult the clock (to drop expired samples) only every this-many times, since balancers read
   * every provider's stats on every pick and a clock read costs as much as the rest of the pick; every
   * write consults it anyway. 1 makes every read exact. Default 16.
   */
  readsPerClockCheck: number;
  /** The peak EWMA's decay time, ms: a sample's weight is 1 − e^(−Δt/peakDecayMs). Default 2000. */
  peakDecayMs: number;
  /** Monotonic clock, ms. Default `performance.now`. */
  now: () => number;
}

export const DEFAULT_ENDPOINT_STATS_OPTIONS: EndpointStatsOptions = {
  windowSize: 64,
  windowMs: 10_000,
  readsPerClockCheck: 16,
  peakDecayMs: 2_000,
  now: () => performance.now(),
};

/** Mutable stats of one provider. */
export interface EndpointStatsRecorder extends EndpointStats {
  /** A call was sent: `active++`. */
  begin(): void;
  /** A call completed after `latencyMs`; `ok` false when it failed. `active--`, one sample recorded. */
  end(latencyMs: number, ok: boolean): void;
  /** A latency measured outside calls (a heartbeat round trip); not counted as a call. */
  recordLatency(ms: number): void;
  /** A call counted by `begin` never went out: `active--`, no sample. */
  abandon(): void;
  /**
   * The provider reported its load (the `callisto-load` attachment's value, load-report.ts); a value
   * that cannot be read is ignored.
   */
  reportLoad(text: string): void;
  /** When the last load report arrived (the stats' clock, ms); NaN before the first. */
  readonly loadAt: number;
  readonly peakLatencyMs: number;
  readonly load: ReportedLoad | undefined;
  /** Forgets every sample (in-flight calls stay counted); the learnt weight factor is kept. */
  reset(): void;
}

const OK = 0;
const FAILED = 1;
const PROBE = 2;

/** Validates and fills `EndpointStatsOptions`. */
export function resolveEndpointStatsOptions(
  options: Partial<EndpointStatsOptions> = {},
): EndpointStatsOptions {
  const resolved = { ...DEFAULT_ENDPOINT_STATS_OPTIONS, ...options };
  if (!Number.isInteger(resolved.windowSize) || resolved.windowSize < 1) {
    throw new ConfigError('endpointStats.windowSize', resolved.windowSize, 'an integer >= 1');
  }
  if (!(resolved.windowMs >= 0))
    throw new ConfigError('endpointStats.windowMs', resolved.windowMs, 'a number >= 0');
  if (!Number.isInteger(resolved.readsPerClockCheck) || resolved.readsPerClockCheck < 1) {
    throw new ConfigError('endpointStats.readsPerClockCheck', resolved.readsPerClockCheck, 'an integer >= 1');
  }
  if (!(resolved.peakDecayMs > 0))
    throw new ConfigError('endpointStats.peakDecayMs', resolved.peakDecayMs, 'a number > 0');
  return resolved;
}

export function createEndpointStats(options: Partial<EndpointStatsOptions> = {}): EndpointStatsRecorder {
  return new SlidingEndpointStats(resolveEndpointStatsOptions(options));
}

/**
 * A class rather than an object literal with getters: every instance then shares one hidden class and
 * one set of accessor functions, so a balancer reading ten providers' stats stays monomorphic and the
 * getters inline.
 */
class SlidingEndpointStats implements EndpointStatsRecorder {
  readonly #capacity: number;
  readonly #windowMs: number;
  readonly #readsPerClockCheck: number;
  readonly #peakDecayMs: number;
  readonly #now: () => number;
  readonly #times: Float64Array;
  readonly #latencies: Float64Array;
  readonly #kinds: Uint8Array;
  /** Next slot to write. */
  #head = 0;
  /** Samples in the window; the oldest sits at `head - size` (mod capacity). */
  #size = 0;
  #latencySum = 0;
  #latencyCount = 0;
  #calls = 0;
  #errors = 0;
  #active = 0;
  #weightFactor = 1;
  /** Reads left before one consults the clock. */
  #readsUntilCheck = 0;
  /** The peak EWMA as of `#peakAt` (0: nothing measured). */
  #peak = 0;
  #peakAt = 0;
  load: ReportedLoad | undefined = undefined;
  loadAt = Number.NaN;

  constructor(options: EndpointStatsOptions) {
    this.#capacity = options.windowSize;
    this.#windowMs = options.windowMs;
    this.#readsPerClockCheck = options.readsPerClockCheck;
    this.#peakDecayMs = options.peakDecayMs;
    this.#now = options.now;
    this.#times = new Float64Array(options.windowSize);
    this.#latencies = new Float64Array(options.windowSize);
    this.#kinds = new Uint8Array(options.windowSize);
  }

  get active(): number {
    return this.#active;
  }

  get meanLatencyMs(): number {
    this.#expireOnRead();
    return this.#latencyCount > 0 ? this.#latencySum / this.#latencyCount : 0;
  }

  get errorRate(): number {
    this.#expireOnRead();
    return this.#calls > 0 ? this.#errors / this.#calls : 0;
  }

  get peakLatencyMs(): number {
    const peak = this.#peak;
    if (peak === 0) return 0;
    const idle = this.#now() - this.#peakAt;
    return idle > 0 ? peak * Math.exp(-idle / this.#peakDecayMs) : peak;
  }

  get weightFactor(): number {
    return this.#weightFactor;
  }

  get samples(): number {
    this.#expireOnRead();
    return this.#calls;
  }

  begin(): void {
    this.#active++;
  }

  end(latencyMs: number, ok: boolean): void {
    if (this.#active > 0) this.#active--;
    this.#weightFactor = nextWeightFactor(this.#weightFactor, ok);
    const at = this.#push(ok ? OK : FAILED, latencyMs);
    if (ok) this.#observePeak(Math.max(latencyMs, 0), at);
  }

  reportLoad(text: string): void {
    const load = parseLoad(text);
    if (load === undefined) return;
    this.load = load;
    this.loadAt = this.#now();
  }

  #observePeak(latency: number, at: number): void {
    const elapsed = at - this.#peakAt;
    const w = elapsed > 0 ? Math.exp(-elapsed / this.#peakDecayMs) : 1;
    // against the value reads see now (decayed for the time since the last sample)
    const decayed = this.#peak * w;
    this.#peak = latency >= decayed ? latency : decayed + latency * (1 - w);
    this.#peakAt = at;
  }

  recordLatency(ms: number): void {
    this.#push(PROBE, ms);
  }

  abandon(): void {
    if (this.#active > 0) this.#active--;
  }

  reset(): void {
    this.#head = 0;
    this.#size = 0;
    this.#latencySum = 0;
    this.#latencyCount = 0;
    this.#calls = 0;
    this.#errors = 0;
    this.#peak = 0;
  }

  #push(kind: number, latencyMs: number): number {
    const at = this.#now();
    this.#expire(at);
    const head = this.#head;
    if (this.#size === this.#capacity) this.#drop(head);
    const latency = Math.max(latencyMs || 0, 0);
    this.#times[head] = at;
    this.#latencies[head] = latency;
    this.#kinds[head] = kind;
    if (kind === FAILED) {
      this.#calls++;
      this.#errors++;
    } else {
      this.#latencySum += latency;
      this.#latencyCount++;
      if (kind === OK) this.#calls++;
    }
    this.#size++;
    if (head + 1 === this.#capacity) {
      this.#head = 0;
      this.#resum();
    } else {
      this.#head = head + 1;
    }
    return at;
  }

  #drop(slot: number): void {
    const kind = this.#kinds[slot];
    if (kind === FAILED) {
      this.#calls--;
      this.#errors--;
    } else {
      this.#latencySum -= this.#latencies[slot]!;
      if (--this.#latencyCount === 0) this.#latencySum = 0;
      if (kind === OK) this.#calls--;
    }
    this.#size--;
  }

  /** On reads: drops expired samples, consulting the clock every `readsPerClockCheck` reads. */
  #expireOnRead(): void {
    if (this.#windowMs <= 0 || this.#size === 0 || --this.#readsUntilCheck > 0) return;
    this.#readsUntilCheck = this.#readsPerClockCheck;
    this.#expire(this.#now());
  }

  #expire(at: number): void {
    if (this.#windowMs <= 0) return;
    const cutoff = at - this.#windowMs;
    const capacity = this.#capacity;
    while (this.#size > 0) {
      const oldest = (this.#head - this.#size + capacity) % capacity;
      if (this.#times[oldest]! >= cutoff) return;
      this.#drop(oldest);
    }
  }

  /** Recomputes the float sum from the window, so subtraction rounding cannot drift. */
  #resum(): void {
    const capacity = this.#capacity;
    let sum = 0;
    for (let k = 0; k < this.#size; k++) {
      const slot = (this.#head - this.#size + k + capacity) % capacity;
      if (this.#kinds[slot] !== FAILED) sum += this.#latencies[slot]!;
    }
    this.#latencySum = sum;
  }
}
