/**
 * `random`: weighted random (Dubbo's default). With equal weights it is a plain uniform pick; otherwise
 * each provider is chosen with probability proportional to its warmed-up weight. Stateless apart from a
 * reused scratch table, so it needs no bookkeeping when the provider list changes.
 */
import type { LoadBalancer, LoadBalancerOptions } from './load-balancer.js';
import { createWeightTable, loadWeights, pickWeighted } from './weight-table.js';

export function createRandomLoadBalancer(options: LoadBalancerOptions): LoadBalancer {
  const table = createWeightTable();
  const balancer: LoadBalancer = {
    select(endpoints) {
      if (endpoints.length === 1) return endpoints[0]!;
      loadWeights(table, endpoints, options);
      return endpoints[pickWeighted(table, options.random())]!;
    },
  };
  return balancer;
}
