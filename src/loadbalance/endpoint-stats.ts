/**
 * The live counters behind `EndpointStats`, one per provider, kept by the cluster layer on every call:
 * `begin()` when a call is sent, `end()` when it completes, `recordLatency()` for heartbeat round trips.
 * Samples live in a fixed ring (the last `windowSize`), and samples older than `windowMs` no longer count,
 * so a provider that was slow a minute ago is not judged by it forever. Every operation is O(1)
 * (amortized) and allocates nothing: this sits on the hot path.
 *
 * Latency is averaged over successful calls and heartbeat samples only: a call that failed fast (connection
 * refused) would otherwise make a broken provider look like the fastest one.
 */
import type { EndpointStats } from './load-balancer.js';

export interface EndpointStatsOptions {
  /** How many recent samples the window holds. Default 64. */
  windowSize: number;
  /** Samples older than this many ms are dropped; 0 keeps them until overwritten. Default 10000. */
  windowMs: number;
  /** Monotonic clock, ms. Default `performance.now`. */
  now: () => number;
}

export const DEFAULT_ENDPOINT_STATS_OPTIONS: EndpointStatsOptions = {
  windowSize: 64,
  windowMs: 10_000,
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
  /** Forgets every sample (in-flight calls stay counted). */
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
    throw new RangeError(`endpoint stats: windowSize must be an integer >= 1, got ${resolved.windowSize}`);
  }
  if (!(resolved.windowMs >= 0)) {
    throw new RangeError(`endpoint stats: windowMs must be a number >= 0, got ${resolved.windowMs}`);
  }
  return resolved;
}

export function createEndpointStats(options: Partial<EndpointStatsOptions> = {}): EndpointStatsRecorder {
  const { windowSize: capacity, windowMs, now } = resolveEndpointStatsOptions(options);
  const times = new Float64Array(capacity);
  const latencies = new Float64Array(capacity);
  const kinds = new Uint8Array(capacity);
  /** Next slot to write. */
  let head = 0;
  /** Samples in the window; the oldest sits at `head - size` (mod capacity). */
  let size = 0;
  let latencySum = 0;
  let latencyCount = 0;
  let calls = 0;
  let errors = 0;
  let active = 0;

  function drop(slot: number): void {
    const kind = kinds[slot];
    if (kind === FAILED) {
      calls--;
      errors--;
    } else {
      latencySum -= latencies[slot]!;
      latencyCount--;
      if (latencyCount === 0) latencySum = 0;
      if (kind === OK) calls--;
    }
    size--;
  }

  function expire(at: number): void {
    if (windowMs <= 0) return;
    const cutoff = at - windowMs;
    while (size > 0) {
      const oldest = (head - size + capacity) % capacity;
      if (times[oldest]! >= cutoff) return;
      drop(oldest);
    }
  }

  /** Recomputes the float sum from the window, so subtraction rounding cannot drift. */
  function resum(): void {
    let sum = 0;
    for (let k = 0; k < size; k++) {
      const slot = (head - size + k + capacity) % capacity;
      if (kinds[slot] !== FAILED) sum += latencies[slot]!;
    }
    latencySum = sum;
  }

  function push(kind: number, latencyMs: number): void {
    const at = now();
    expire(at);
    if (size === capacity) drop(head);
    const latency = Math.max(latencyMs || 0, 0);
    times[head] = at;
    latencies[head] = latency;
    kinds[head] = kind;
    if (kind === FAILED) {
      calls++;
      errors++;
    } else {
      latencySum += latency;
      latencyCount++;
      if (kind === OK) calls++;
    }
    size++;
    head++;
    if (head === capacity) {
      head = 0;
      resum();
    }
  }

  return {
    get active() {
      return active;
    },
    get meanLatencyMs() {
      expire(now());
      return latencyCount > 0 ? latencySum / latencyCount : 0;
    },
    get errorRate() {
      expire(now());
      return calls > 0 ? errors / calls : 0;
    },
    get samples() {
      expire(now());
      return calls;
    },
    begin() {
      active++;
    },
    end(latencyMs, ok) {
      if (active > 0) active--;
      push(ok ? OK : FAILED, latencyMs);
    },
    recordLatency(ms) {
      push(PROBE, ms);
    },
    reset() {
      head = 0;
      size = 0;
      latencySum = 0;
      latencyCount = 0;
      calls = 0;
      errors = 0;
    },
  };
}
