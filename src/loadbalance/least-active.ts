/**
 * `leastactive`: the provider with the fewest calls in flight (`stats.active`); ties are broken by
 * weighted random over the tied providers' warmed-up weights. A slow provider accumulates in-flight calls
 * and so receives fewer new ones. The counters are always on (the cluster layer keeps them), so this
 * never silently degrades to random.
 */
import type { Endpoint, LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { createLowestCostPicker } from './tie-set.js';
import { createWeightTable, loadWeights } from './weight-table.js';

const activeCalls = (endpoint: Endpoint): number => endpoint.stats.active;

export function createLeastActiveLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const table = createWeightTable();
  const lowest = createLowestCostPicker(activeCalls);
  return {
    select(endpoints) {
      const n = endpoints.length;
      if (n === 1) return endpoints[0]!;
      const weights = loadWeights(table, endpoints, options).weights;
      return endpoints[lowest.pick(endpoints, weights, undefined, options.random())]!;
    },
  };
}
