/**
 * Latency estimates shared by `shortestresponse` and `p2c`. A provider with no latency measured yet
 * (`meanLatencyMs` 0) is treated as being as fast as the fastest measured one, so newcomers get tried
 * instead of being starved (or flooded, were they taken to be instantaneous).
 */
import type { Endpoint } from './load-balancer.js';

/**
 * Latency floor, ms: keeps the cost `latency * (active + 1)` from collapsing to 0 when nothing is
 * measured anywhere (then the cost orders by in-flight calls alone).
 */
export const MIN_LATENCY_MS = 0.001;

/** The smallest measured mean latency among `endpoints` whose `weights[i] > 0`, or 0 if none is measured. */
export function fastestMeasured(endpoints: readonly Endpoint[], weights: Float64Array): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < endpoints.length; i++) {
    if (!(weights[i]! > 0)) continue;
    const mean = endpoints[i]!.stats.meanLatencyMs;
    if (mean > 0 && mean < fastest) fastest = mean;
  }
  return fastest === Number.POSITIVE_INFINITY ? 0 : fastest;
}

/** The latency to assume for `endpoint`, with `fallback` (the fastest measured) when it has none. */
export function assumedLatency(endpoint: Endpoint, fallback: number): number {
  const mean = endpoint.stats.meanLatencyMs;
  const latency = mean > 0 ? mean : fallback;
  return Math.max(latency, MIN_LATENCY_MS);
}

/** Expected wait before a new call to `endpoint` completes: latency x (calls in flight + 1). */
export function expectedWait(endpoint: Endpoint, fallback: number): number {
  return assumedLatency(endpoint, fallback) * (endpoint.stats.active + 1);
}
