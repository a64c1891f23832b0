/**
 * The observability filters' own work per call, in isolation: each hook pair run millions of times on a
 * reused invocation, ns per call (median of rounds). What the metrics and tracing filters add to a call
 * is this, against the few µs of CPU a whole call costs (bench/observe-cost.ts, npm run bench).
 *
 *   npx tsx bench/observe-hooks.ts
 */

import type { AttemptInvocation } from '../src/filters/attempt-invocation.js';
import { metricsCallFilter } from '../src/filters/metrics-call.js';
import { metricsClientFilter } from '../src/filters/metrics-client.js';
import { type MeteredInvocation, metricsServerFilter } from '../src/filters/metrics-server.js';
import { type TracedInvocation, tracingClientFilter } from '../src/filters/tracing-client.js';
import { tracingServerFilter } from '../src/filters/tracing-server.js';
import type { Invocation, NamedFilter } from '../src/index.js';
import { RpcError } from '../src/index.js';
import { createMetricsStore } from '../src/observability/metrics-store.js';
import { runInAsyncCallContext, runInCallContext } from '../src/provider/call-context.js';

const N = 2_000_000;
const ROUNDS = 7;
const key = { name: 'bench.UserService', version: '1.0.0', group: '' };
const store = createMetricsStore('bench');

const invocation = {
  service: key,
  method: 'getUser',
  args: [1],
  attachments: {},
  deadline: 0,
  signal: undefined,
  oneway: false,
  idempotent: true,
  remoteAddress: '127.0.0.1:20880',
  meteredAt: 0,
  requestBytes: 12,
  attempts: 0,
  lastAttemptAddress: undefined,
  tracingSpan: undefined,
} as unknown as MeteredInvocation & AttemptInvocation & TracedInvocation;

function hooks(filters: NamedFilter<typeof invocation>[], fail: boolean): () => void {
  const error = fail ? new RpcError('Timeout', 'late') : undefined;
  return () => {
    for (const filter of filters) filter.start?.(invocation);
    for (let i = filters.length - 1; i >= 0; i--) filters[i]!.end?.(invocation, error);
    invocation.attempts = 0;
  };
}

function nsPerCall(body: () => unknown): number {
  const results: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < N; i++) body();
    results.push(Number(process.hrtime.bigint() - started) / N);
  }
  return results.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

const empty = () => 1;
const step = tracingServerFilter.step!(empty as never) as (i: Invocation) => unknown;
const cases: Array<[string, () => unknown]> = [
  ['nothing (loop overhead)', () => 1],
  [
    'provider metrics (start + end)',
    hooks([metricsServerFilter(store.method('provider', key, 'getUser'))], false),
  ],
  [
    'consumer metrics per call + metrics-client per attempt',
    hooks(
      [
        metricsCallFilter(store.method('consumer', key, 'getUser')),
        metricsClientFilter(store.method('consumer', key, 'getUser')),
      ],
      false,
    ),
  ],
  ['consumer tracing, no SDK (start + end)', hooks([tracingClientFilter()], false)],
  ['provider tracing step, no SDK', () => step(invocation)],
  ['call context: synchronous part (default)', () => runInCallContext(invocation, empty)],
  ['call context: AsyncLocalStorage run', () => runInAsyncCallContext(invocation, empty)],
];
console.log(`ns per call, median of ${ROUNDS} rounds of ${N.toLocaleString()}`);
for (const [name, body] of cases) console.log(`${name.padEnd(56)} ${nsPerCall(body).toFixed(1).padStart(7)}`);
