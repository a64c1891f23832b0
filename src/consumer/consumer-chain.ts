/**
 * The consumer's chain table: every filter Callisto places on the consumer, at the per-call (`call`)
 * and per-attempt (`attempt`) positions, with the condition that puts it in a method's chain. Orders
 * are not written here: each filter takes its own from core/filter-order.ts (FILTER_ORDER.call and
 * .attempt), which is also what docs/filters.md is generated from. Adding a built-in consumer filter
 * touches that order table, this table and the filter's own file.
 *
 * A method's call chain is the user's call filters (the app's, the reference's, the method's) and the
 * rows below that are in; its attempt chain the rows that are in and the user's attempt filters; each
 * is run in order (equal orders: the user's call filters first, the built-in attempt filters first).
 */
import type { NamedFilter } from '../core/filter.js';
import type { FILTER_TABLE } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { attemptDeadlineFilter } from '../filters/attempt-deadline.js';
import { type ConsumerLimitState, consumerLimitFilter } from '../filters/consumer-limit.js';
import { endpointStatsFilter } from '../filters/endpoint-stats.js';
import { metricsCallFilter } from '../filters/metrics-call.js';
import { metricsClientFilter } from '../filters/metrics-client.js';
import { mockFallbackFilter } from '../filters/mock-fallback.js';
import { observeClientFilter } from '../filters/observe-client.js';
import { type OutcomeRecorder, outlierFilter } from '../filters/outlier.js';
import { createResultCache } from '../filters/result-cache.js';
import { throttleFilter } from '../filters/throttle.js';
import { tracingClientFilter } from '../filters/tracing-client.js';
import type { ResultCacheOptions } from '../governance/cache-options.js';
import type { MethodMetrics } from '../observability/method-metrics.js';
import type { ClientInvocation } from './client-invocation.js';

/** What the call rows read of one method. */
export interface CallChainNeeds {
  /** Where `metrics-call` counts (undefined: `metrics: false`). */
  readonly metrics: MethodMetrics | undefined;
  /** `tracing: true` and an OpenTelemetry SDK registered. */
  readonly tracing: boolean;
  /** The reference's and the method's `limits` that set anything. */
  readonly limits: readonly ConsumerLimitState[];
  /** The method's result cache (`cache: { ttlMs, max }`), and how its arguments become a key. */
  readonly cache: ResultCacheOptions | undefined;
  readonly encode: (args: unknown[]) => Uint8Array;
  /** With `mock: 'fail'`: the mock answer of a call that failed. */
  readonly mockFallback: ((invocation: Invocation) => unknown) | undefined;
}

/** What the attempt rows read of one method. */
export interface AttemptChainNeeds {
  /** `Service.method`, for messages. */
  readonly label: string;
  /** `attemptTimeoutMs`: an idempotent method's cap per attempt (0: none). */
  readonly attemptTimeoutMs: number;
  /** The app's `credentials` filter (`consumer.credentials`), made once per app; undefined when unset. */
  readonly credentials: NamedFilter | undefined;
  /** `outlierDetection` (default true). */
  readonly outlierDetection: boolean;
  /** The service's outlier detector (made on first use). */
  readonly detector: () => OutcomeRecorder;
  /** Where `metrics-client` counts (undefined: `metrics: false`). */
  readonly metrics: MethodMetrics | undefined;
  /** `adaptiveThrottlingK` when `adaptiveThrottling` is on (default 2); undefined when off. */
  readonly throttlingK: number | undefined;
}

/** One row: when the filter is in a method's chain, and the filter. */
interface ChainRow<Needs> {
  readonly in: (needs: Needs) => boolean;
  readonly filter: (needs: Needs) => NamedFilter<ClientInvocation>;
}

/** Every built-in of a position (the order table's names, `user` aside): the compiler checks none is missing. */
type Rows<Position extends 'call' | 'attempt', Needs> = {
  readonly [Name in Exclude<keyof (typeof FILTER_TABLE)[Position], 'user'>]: ChainRow<Needs>;
};

export const CALL_CHAIN: Rows<'call', CallChainNeeds> = {
  'metrics-call': {
    in: (needs) => needs.metrics !== undefined,
    filter: (needs) => metricsCallFilter(needs.metrics!),
  },
  cache: {
    in: (needs) => needs.cache !== undefined,
    filter: (needs) => createResultCache(needs.cache!, needs.encode).filter,
  },
  limit: {
    in: (needs) => needs.limits.length > 0,
    filter: (needs) => consumerLimitFilter(needs.limits),
  },
  'tracing-client': {
    in: (needs) => needs.tracing,
    filter: () => tracingClientFilter(),
  },
  mock: {
    in: (needs) => needs.mockFallback !== undefined,
    filter: (needs) => mockFallbackFilter(needs.mockFallback!),
  },
};

export const ATTEMPT_CHAIN: Rows<'attempt', AttemptChainNeeds> = {
  deadline: {
    in: () => true,
    filter: (needs) => attemptDeadlineFilter(needs.label, needs.attemptTimeoutMs),
  },
  credentials: {
    in: (needs) => needs.credentials !== undefined,
    filter: (needs) => needs.credentials!,
  },
  observe: {
    in: () => true,
    filter: () => observeClientFilter(),
  },
  'endpoint-stats': {
    in: () => true,
    filter: () => endpointStatsFilter(),
  },
  outlier: {
    in: (needs) => needs.outlierDetection,
    filter: (needs) => outlierFilter(needs.detector()),
  },
  'metrics-client': {
    in: (needs) => needs.metrics !== undefined,
    filter: (needs) => metricsClientFilter(needs.metrics!),
  },
  throttle: {
    in: (needs) => needs.throttlingK !== undefined,
    filter: (needs) => throttleFilter(needs.label, needs.throttlingK!),
  },
};

/** The built-in filters of a position that are in for `needs`, in the table's order. */
function builtins<Needs>(
  rows: Record<string, ChainRow<Needs>>,
  needs: Needs,
): NamedFilter<ClientInvocation>[] {
  const filters: NamedFilter<ClientInvocation>[] = [];
  for (const row of Object.values(rows)) if (row.in(needs)) filters.push(row.filter(needs));
  return filters;
}

/** A method's call filters: the user's, then the built-ins that are in (each runs at its order). */
export function callFilters(
  user: readonly NamedFilter[],
  needs: CallChainNeeds,
): NamedFilter<ClientInvocation>[] {
  return [...user, ...builtins(CALL_CHAIN, needs)];
}

/** A method's attempt filters: the built-ins that are in, then the user's (each runs at its order). */
export function attemptFilters(
  user: readonly NamedFilter[],
  needs: AttemptChainNeeds,
): NamedFilter<ClientInvocation>[] {
  return [...builtins(ATTEMPT_CHAIN, needs), ...user];
}
