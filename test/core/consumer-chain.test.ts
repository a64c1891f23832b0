/**
 * The consumer's chain table (src/consumer/consumer-chain.ts): every built-in filter of the order table
 * at the `call` and `attempt` positions has one row, each row builds the filter of its name at its
 * order, and a row is in a method's chain exactly when its condition says so.
 */
import { describe, expect, it } from 'vitest';
import {
  ATTEMPT_CHAIN,
  type AttemptChainNeeds,
  attemptFilters,
  CALL_CHAIN,
  type CallChainNeeds,
  callFilters,
} from '../../src/consumer/consumer-chain.js';
import { orderFilters } from '../../src/core/filter.js';
import { FILTER_TABLE } from '../../src/core/filter-order.js';
import { credentialsFilter } from '../../src/filters/credentials.js';
import { createMetricsStore } from '../../src/observability/metrics-store.js';

const builtinNames = (position: 'call' | 'attempt') =>
  Object.keys(FILTER_TABLE[position]).filter((name) => name !== 'user');

const metrics = createMetricsStore('test').method(
  'consumer',
  { name: 'test.Chain', version: '', group: '' },
  'm',
);
const everyCall: CallChainNeeds = {
  metrics,
  tracing: true,
  limits: [{ label: 'x', limits: { actives: 1 }, bucket: undefined, active: 0 }],
  cache: { ttlMs: 1_000, max: 10 },
  encode: () => new Uint8Array(),
  mockFallback: () => undefined,
};
const noCall: CallChainNeeds = {
  metrics: undefined,
  tracing: false,
  limits: [],
  cache: undefined,
  encode: () => new Uint8Array(),
  mockFallback: undefined,
};
const everyAttempt: AttemptChainNeeds = {
  label: 'test.Chain.m',
  attemptTimeoutMs: 0,
  credentials: credentialsFilter('token'),
  outlierDetection: true,
  detector: () => ({ record() {} }),
  metrics,
  throttlingK: 2,
};
const noAttempt: AttemptChainNeeds = {
  ...everyAttempt,
  credentials: undefined,
  outlierDetection: false,
  metrics: undefined,
  throttlingK: undefined,
};

describe('the consumer chain table', () => {
  it('has one row per built-in call and attempt filter of the order table', () => {
    expect(Object.keys(CALL_CHAIN).sort()).toEqual(builtinNames('call').sort());
    expect(Object.keys(ATTEMPT_CHAIN).sort()).toEqual(builtinNames('attempt').sort());
  });

  it('builds each filter under its own name, at its order, when every condition holds', () => {
    const call = orderFilters(callFilters([], everyCall));
    expect(call.map((filter) => filter.name)).toEqual(builtinNames('call'));
    for (const filter of call) {
      expect(filter.order).toBe(FILTER_TABLE.call[filter.name as keyof typeof FILTER_TABLE.call].order);
    }
    const attempt = orderFilters(attemptFilters([], everyAttempt));
    expect(attempt.map((filter) => filter.name)).toEqual(builtinNames('attempt'));
  });

  it('leaves out what is not configured: the always-on filters remain', () => {
    expect(callFilters([], noCall)).toEqual([]);
    expect(orderFilters(attemptFilters([], noAttempt)).map((filter) => filter.name)).toEqual([
      'deadline',
      'observe',
      'endpoint-stats',
    ]);
  });
});
