/**
 * `leastactive`: the provider with the fewest calls in flight (`stats.active`); ties are broken by
 * weighted random over the tied providers' warmed-up weights. A slow provider accumulates in-flight calls
 * and so receives fewer new ones. The counters are always on (the cluster layer keeps them), so this
 * never silently degrades to random.
 */
import type { LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { addTie, clearTies, createTieSet, pickTie } from './tie-set.js';
import { createWeightTable, loadWeights } from './weight-table.js';

export function createLeastActiveLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const table = createWeightTable();
  const ties = createTieSet();
  return {
    select(endpoints) {
      const n = endpoints.length;
      if (n === 1) return endpoints[0]!;
      const weights = loadWeights(table, endpoints, options).weights;
      clearTies(ties, n);
      let least = Number.POSITIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        const w = weights[i]!;
        if (w <= 0) continue;
        const active = endpoints[i]!.stats.active;
        if (active < least) {
          least = active;
          clearTies(ties, n);
        } else if (active > least) {
          continue;
        }
        addTie(ties, i, w);
      }
      return endpoints[pickTie(ties, options.random())]!;
    },
  };
}
