/**
 * The `endpoints` part of the admin `/stats` feed: per service this consumer calls and per provider, the
 * configured weight, the learnt factor (effective-weight.ts) and the weight the balancers use now
 * (warm-up and, when `consumer.effectiveWeight` is on, the factor applied), with the calls in flight and
 * the recent error rate that explain it; and what `p2c` weighs: the peak-EWMA latency and the load the
 * provider last reported (loadbalance/load-report.ts), with its age.
 */
import type { Directory } from '../consumer/directory.js';
import { balancingWeight, weightFactorOf } from '../loadbalance/effective-weight.js';
import type { ReportedLoad } from '../loadbalance/load-report.js';

export interface EndpointWeightView {
  service: string;
  version: string;
  group: string;
  address: string;
  /** Configured (registry or override) weight. */
  weight: number;
  /** Learnt share of it, 0.1..1 (failures lower it, successes restore it). */
  weightFactor: number;
  /** What the balancers use now: warmed up, times the factor when effective weights are on. */
  effectiveWeight: number;
  inFlight: number;
  /** Failed share of the calls in the recent window, 0..1. */
  errorRate: number;
  /** Peak-EWMA latency of its successful calls, ms (0: none measured). */
  peakLatencyMs: number;
  /** The load it last reported, and how long ago (ms); absent before its first report. */
  load?: ReportedLoad & { ageMs: number };
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

export function endpointWeights(
  directories: Iterable<Directory>,
  options: { readonly warmupMs: number; readonly effectiveWeight: boolean },
  now: number = Date.now(),
): EndpointWeightView[] {
  const monotonic = performance.now();
  return [...directories].flatMap((directory) =>
    directory.list().map(
      (endpoint): EndpointWeightView => ({
        service: directory.key.name,
        version: directory.key.version,
        group: directory.key.group,
        address: endpoint.address,
        weight: endpoint.weight,
        weightFactor: round(weightFactorOf(endpoint)),
        effectiveWeight: round(balancingWeight(endpoint, now, options)),
        inFlight: endpoint.stats.active,
        errorRate: round(endpoint.stats.errorRate),
        peakLatencyMs: round(endpoint.stats.peakLatencyMs),
        ...(endpoint.stats.load === undefined
          ? {}
          : { load: { ...endpoint.stats.load, ageMs: Math.round(monotonic - endpoint.stats.loadAt) } }),
      }),
    ),
  );
}
