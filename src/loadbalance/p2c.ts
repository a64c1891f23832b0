/**
 * `p2c`: power of two choices with a peak-EWMA cost, as Finagle's and linkerd's balancers. Two distinct
 * providers are drawn at random (weighted by warmed-up weight) and the cheaper one wins:
 *
 *   cost = latency × (calls in flight + 1) × (1 + pressure)
 *
 * `latency` is the provider's peak EWMA (endpoint-stats.ts: it jumps to a slower answer at once and
 * decays towards faster ones), or its mean latency where no peak is kept, and a provider with no latency
 * measured counts as the fastest measured one (as in `shortestresponse`): the expected wait of a new
 * call there. `pressure` is what the provider itself last reported (load-report.ts): its calls in flight
 * and queued as a share of its concurrency limit (at most 1), plus 1 while it counts as overloaded — what
 * every consumer's calls do to it, which this consumer's own in-flight count cannot see. Equal costs go
 * to the first drawn. Nearly as good as scanning for the cheapest, without herding every caller onto the
 * same provider when their views are stale.
 *
 * Weights weigh the draw, but with two providers both are always drawn; so a provider that is not at
 * its full weight — still warming up (warmup.ts), or with a learnt factor below 1 (effective-weight.ts)
 * — stays in the contest only with probability `its share / the other's share` (otherwise the other
 * wins): a provider that started a minute into a 10-minute warm-up wins at most a tenth of the contests
 * it would have won, and a provider at a tenth of its learnt weight keeps the trickle of calls that
 * restores it.
 */
import { MIN_LATENCY_MS } from './expected-latency.js';
import type { Endpoint, LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { loadPressure } from './load-report.js';
import { createWeightTable, loadWeights, pickWeighted, type WeightTable } from './weight-table.js';

export function createP2cLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const table = createWeightTable();
  return {
    select(endpoints) {
      const n = endpoints.length;
      if (n === 1) return endpoints[0]!;
      loadWeights(table, endpoints, options);
      if (table.positive === 1) return endpoints[table.lastPositive]!;
      const i = pickWeighted(table, options.random());
      const j = pickWeighted(table, options.random(), i);
      const a = endpoints[i]!;
      const b = endpoints[j]!;
      const shareA = shareOfWeight(table, i, a);
      const shareB = shareOfWeight(table, j, b);
      if (shareA < shareB && options.random() >= shareA / shareB) return b;
      if (shareB < shareA && options.random() >= shareB / shareA) return a;
      const latencyA = latencyOf(a);
      const latencyB = latencyOf(b);
      if (latencyA > 0 && latencyB > 0) return costOf(b, latencyB) < costOf(a, latencyA) ? b : a;
      // One or both unmeasured: they count as the fastest measured provider.
      const fallback = fastestLatency(endpoints, table);
      const costA = costOf(a, latencyA > 0 ? latencyA : fallback);
      return costOf(b, latencyB > 0 ? latencyB : fallback) < costA ? b : a;
    },
  };
}

/** The share of its configured weight an endpoint has now (warm-up × learnt factor), (0, 1]. */
function shareOfWeight(table: WeightTable, index: number, endpoint: Endpoint): number {
  const weight = endpoint.weight;
  if (!(weight > 0)) return 1;
  const share = table.weights[index]! / weight;
  return Math.min(share, 1);
}

/** The latency p2c expects of `endpoint`: its peak EWMA, else its mean; 0 when nothing was measured. */
export function latencyOf(endpoint: Endpoint): number {
  const stats = endpoint.stats;
  const peak = stats.peakLatencyMs;
  return peak !== undefined && peak > 0 ? peak : stats.meanLatencyMs;
}

/** The cost of one more call to `endpoint` at `latency` ms. */
export function costOf(endpoint: Endpoint, latency: number): number {
  const stats = endpoint.stats;
  const wait = Math.max(latency, MIN_LATENCY_MS) * (stats.active + 1);
  const load = stats.load;
  return load === undefined ? wait : wait * (1 + loadPressure(load));
}

/** The lowest measured latency among the endpoints with a positive weight, 0 if none is measured. */
function fastestLatency(endpoints: readonly Endpoint[], table: WeightTable): number {
  let fastest = Number.POSITIVE_INFINITY;
  for (let k = 0; k < endpoints.length; k++) {
    if (!(table.weights[k]! > 0)) continue;
    const latency = latencyOf(endpoints[k]!);
    if (latency > 0 && latency < fastest) fastest = latency;
  }
  return fastest === Number.POSITIVE_INFINITY ? 0 : fastest;
}
