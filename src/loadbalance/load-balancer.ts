/**
 * The load-balancer extension point (kind `loadbalance`). A balancer sees only the candidate endpoints
 * and the invocation, nothing else, and picks one. It is created once per reference (or per method) and
 * may keep state between picks (round-robin counters, a hash ring rebuilt only when the list changes).
 */
import type { Invocation } from '../core/invocation.js';
import type { ReportedLoad } from './load-report.js';

/** Live counters of one provider, kept by the cluster layer and always on. */
export interface EndpointStats {
  /** Calls in flight to this endpoint right now. */
  readonly active: number;
  /** Mean latency in ms over the recent sliding window (0 when nothing was measured yet). */
  readonly meanLatencyMs: number;
  /** Recent error rate, 0..1. */
  readonly errorRate: number;
  /** Calls completed in the window. */
  readonly samples: number;
  /**
   * The learnt share of the configured weight, in [0.1, 1]: lowered by failures, restored by successes
   * (effective-weight.ts). Absent means 1.
   */
  readonly weightFactor?: number;
  /**
   * Peak EWMA of the successful calls' latency, ms: jumps to a slower sample at once, decays towards
   * faster ones over about 2 s (endpoint-stats.ts). Absent or 0: not measured; `p2c` then reads
   * `meanLatencyMs`.
   */
  readonly peakLatencyMs?: number;
  /** The last load the provider reported (load-report.ts); absent before its first report. */
  readonly load?: ReportedLoad | undefined;
}

/** What a balancer may know about a provider. */
export interface Endpoint {
  /** `host:port`, unique within a list. */
  readonly address: string;
  /** Configured weight (default 100); 0 means never picked. */
  readonly weight: number;
  /** When the provider started (ms since epoch), for warm-up. */
  readonly startTime: number;
  readonly stats: EndpointStats;
}

export interface LoadBalancer {
  /** Picks one of `endpoints` (never empty) for `invocation`. */
  select<E extends Endpoint>(endpoints: readonly E[], invocation: Invocation): E;
}

export interface LoadBalancerOptions {
  /** Warm-up period: a new provider's weight ramps from low to full over it. Default 600000 (10 min). */
  warmupMs: number;
  /**
   * Scale each provider's weight by its learnt `stats.weightFactor` (failures lower it, successes
   * restore it; effective-weight.ts). Default true.
   */
  effectiveWeight: boolean;
  /** Consistent hash: argument positions forming the key. Default [0]. */
  hashArguments: number[];
  /** Consistent hash: virtual nodes per provider (scaled by weight). Default 160. */
  virtualNodes: number;
  /** Random source in [0, 1); tests pass a seeded one. Default Math.random. */
  random: () => number;
  /** Clock, ms. Default Date.now. */
  now: () => number;
}

export const DEFAULT_LOAD_BALANCER_OPTIONS: LoadBalancerOptions = {
  warmupMs: 600_000,
  effectiveWeight: true,
  hashArguments: [0],
  virtualNodes: 160,
  random: Math.random,
  now: Date.now,
};

/** The balancer used when none is configured (`consumer.loadbalance`). */
export const DEFAULT_LOAD_BALANCER = 'random';

export type LoadBalancerFactory = (options: LoadBalancerOptions) => LoadBalancer;

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    loadbalance: LoadBalancerFactory;
  }
}
