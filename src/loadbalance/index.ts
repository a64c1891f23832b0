/**
 * The built-in load balancers (kind `loadbalance`), in app/builtin-extensions.ts's constant table. Each
 * factory takes resolved `LoadBalancerOptions` (see `resolveLoadBalancerOptions`).
 */
import { createConsistentHashLoadBalancer } from './consistent-hash.js';
import { createLeastActiveLoadBalancer } from './least-active.js';
import type { LoadBalancerFactory } from './load-balancer.js';
import { createP2cLoadBalancer } from './p2c.js';
import { createRandomLoadBalancer } from './random.js';
import { createRoundRobinLoadBalancer } from './round-robin.js';
import { createShortestResponseLoadBalancer } from './shortest-response.js';

/** Name -> factory of every built-in balancer. */
export const BUILTIN_LOAD_BALANCERS: Readonly<Record<string, LoadBalancerFactory>> = {
  random: createRandomLoadBalancer,
  roundrobin: createRoundRobinLoadBalancer,
  consistenthash: createConsistentHashLoadBalancer,
  leastactive: createLeastActiveLoadBalancer,
  shortestresponse: createShortestResponseLoadBalancer,
  p2c: createP2cLoadBalancer,
};

export { createConsistentHashLoadBalancer } from './consistent-hash.js';
export type { EndpointStatsOptions, EndpointStatsRecorder } from './endpoint-stats.js';
export { createEndpointStats, DEFAULT_ENDPOINT_STATS_OPTIONS } from './endpoint-stats.js';
export { createLeastActiveLoadBalancer } from './least-active.js';
export * from './load-balancer.js';
export { createP2cLoadBalancer } from './p2c.js';
export { createRandomLoadBalancer } from './random.js';
export { resolveLoadBalancerOptions } from './resolve-options.js';
export { createRoundRobinLoadBalancer } from './round-robin.js';
export { createShortestResponseLoadBalancer } from './shortest-response.js';
export { warmupWeight } from './warmup.js';
