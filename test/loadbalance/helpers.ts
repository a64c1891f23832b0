import type { Invocation } from '../../src/core/invocation.js';
import {
  DEFAULT_LOAD_BALANCER_OPTIONS,
  type Endpoint,
  type EndpointStats,
  type LoadBalancer,
  type LoadBalancerOptions,
} from '../../src/loadbalance/load-balancer.js';
import { manualClock, seededRandom } from '../support/seeded-random.js';

export interface TestEndpoint extends Endpoint {
  stats: { active: number; meanLatencyMs: number; errorRate: number; samples: number } & EndpointStats;
}

/** An endpoint with settable stats. */
export function endpoint(
  address: string,
  weight = 100,
  init: { startTime?: number; active?: number; meanLatencyMs?: number } = {},
): TestEndpoint {
  return {
    address,
    weight,
    startTime: init.startTime ?? 0,
    stats: {
      active: init.active ?? 0,
      meanLatencyMs: init.meanLatencyMs ?? 0,
      errorRate: 0,
      samples: init.meanLatencyMs ? 10 : 0,
    },
  };
}

export function invocation(args: unknown[] = []): Invocation {
  return {
    service: { name: 'test.Service', version: '1.0.0', group: '' },
    method: 'call',
    args,
    attachments: {},
    deadline: 0,
    signal: undefined,
    oneway: false,
    idempotent: true,
  };
}

/** Options with a seeded random source and a fixed clock. */
export function testOptions(seed = 42, overrides: Partial<LoadBalancerOptions> = {}): LoadBalancerOptions {
  return {
    ...DEFAULT_LOAD_BALANCER_OPTIONS,
    random: seededRandom(seed),
    now: manualClock().now,
    ...overrides,
  };
}

/** Picks `count` times and returns each address's share of the picks. */
export function shares(
  balancer: LoadBalancer,
  endpoints: readonly Endpoint[],
  count = 10_000,
  inv: Invocation = invocation(),
): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of endpoints) counts[e.address] = 0;
  for (let i = 0; i < count; i++) {
    const picked = balancer.select(endpoints, inv);
    counts[picked.address] = (counts[picked.address] ?? 0) + 1;
  }
  for (const key of Object.keys(counts)) counts[key] = counts[key]! / count;
  return counts;
}

/** The sequence of addresses picked over `count` selections. */
export function sequence(balancer: LoadBalancer, endpoints: readonly Endpoint[], count: number): string[] {
  const inv = invocation();
  return Array.from({ length: count }, () => balancer.select(endpoints, inv).address);
}
