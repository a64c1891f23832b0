/**
 * `p2c`: power of two choices. Two distinct providers are drawn at random (weighted by warmed-up weight)
 * and the less loaded one wins: fewer calls in flight first, then the lower latency (a provider with no
 * latency measured counts as the fastest measured one, as in `shortestresponse`), then the first drawn.
 * Nearly as good as scanning for the least loaded, without herding every caller onto the same provider
 * when their views of the load are stale.
 *
 * Learnt weights (effective-weight.ts) weigh the draw, but with two providers both are always drawn; so
 * when the pair's factors differ, the one with the lower factor stays in the contest only with
 * probability `lower / higher` (otherwise the other wins): a provider at a tenth of its weight wins at
 * most a tenth of the contests it would have won, and keeps the trickle of calls that restores it.
 */
import { weightFactorOf } from './effective-weight.js';
import { assumedLatency, fastestMeasured } from './expected-latency.js';
import type { LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { createWeightTable, loadWeights, pickWeighted } from './weight-table.js';

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
      if (options.effectiveWeight) {
        const factorA = weightFactorOf(a);
        const factorB = weightFactorOf(b);
        if (factorA < factorB && options.random() >= factorA / factorB) return b;
        if (factorB < factorA && options.random() >= factorB / factorA) return a;
      }
      const activeA = a.stats.active;
      const activeB = b.stats.active;
      if (activeA !== activeB) return activeB < activeA ? b : a;
      const meanA = a.stats.meanLatencyMs;
      const meanB = b.stats.meanLatencyMs;
      if (meanA > 0 && meanB > 0) return meanB < meanA ? b : a;
      if (!(meanA > 0) && !(meanB > 0)) return a;
      // One of the two is unmeasured: it counts as the fastest measured provider.
      const fallback = fastestMeasured(endpoints, table.weights);
      return assumedLatency(b, fallback) < assumedLatency(a, fallback) ? b : a;
    },
  };
}
