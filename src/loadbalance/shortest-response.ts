/**
 * `shortestresponse`: the provider with the smallest expected wait, `meanLatencyMs x (active + 1)`, the
 * time a new call would take if the calls already in flight were served one after the other. Ties are
 * broken by weighted random over warmed-up weights. A provider with no latency measured yet counts as the
 * fastest measured one, so new providers get tried.
 */
import { expectedWait, fastestMeasured } from './expected-latency.js';
import type { LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { createLowestCostPicker } from './tie-set.js';
import { createWeightTable, loadWeights } from './weight-table.js';

export function createShortestResponseLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const table = createWeightTable();
  const lowest = createLowestCostPicker(expectedWait);
  return {
    select(endpoints) {
      const n = endpoints.length;
      if (n === 1) return endpoints[0]!;
      const weights = loadWeights(table, endpoints, options).weights;
      const fallback = fastestMeasured(endpoints, weights);
      return endpoints[lowest.pick(endpoints, weights, fallback, options.random())]!;
    },
  };
}
