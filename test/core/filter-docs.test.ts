/**
 * docs/filters.md's table of Callisto's filters is generated from the order table
 * (src/core/filter-order.ts, `npm run docs:filters`), and the table says what the filters are: each
 * built-in filter has the name, position, order and form of its entry.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FILTER_DOCS, renderFilterTable, withFilterTable } from '../../scripts/filter-docs.js';
import type { NamedFilter } from '../../src/core/filter.js';
import { FILTER_TABLE, type FilterOrderEntry } from '../../src/core/filter-order.js';
import { accessLogFilter } from '../../src/filters/access-log.js';
import { accessRulesFilter } from '../../src/filters/access-rules.js';
import { admissionFilter } from '../../src/filters/admission.js';
import { attemptDeadlineFilter } from '../../src/filters/attempt-deadline.js';
import { authFilter } from '../../src/filters/auth.js';
import { consumerLimitFilter, createConsumerLimitState } from '../../src/filters/consumer-limit.js';
import { credentialsFilter } from '../../src/filters/credentials.js';
import { providerDeadlineFilter } from '../../src/filters/deadline.js';
import { decodeArgumentsFilter } from '../../src/filters/decode-arguments.js';
import { endpointStatsFilter } from '../../src/filters/endpoint-stats.js';
import { executesFilter } from '../../src/filters/executes.js';
import { leakyRateFilter } from '../../src/filters/leaky-rate.js';
import { metricsCallFilter } from '../../src/filters/metrics-call.js';
import { metricsClientFilter } from '../../src/filters/metrics-client.js';
import { metricsServerFilter } from '../../src/filters/metrics-server.js';
import { mockFallbackFilter } from '../../src/filters/mock-fallback.js';
import { observeClientFilter } from '../../src/filters/observe-client.js';
import { observeServerFilter } from '../../src/filters/observe-server.js';
import { outlierFilter } from '../../src/filters/outlier.js';
import { rateLimitFilter } from '../../src/filters/rate-limit.js';
import { registryTokenFilter } from '../../src/filters/registry-token.js';
import { createResultCache } from '../../src/filters/result-cache.js';
import { shutdownFilter } from '../../src/filters/shutdown.js';
import { throttleFilter } from '../../src/filters/throttle.js';
import { tracingClientFilter } from '../../src/filters/tracing-client.js';
import { tracingServerFilter } from '../../src/filters/tracing-server.js';
import { validationFilter } from '../../src/filters/validation.js';
import { createServiceTime } from '../../src/governance/service-time.js';
import { createMetricsStore } from '../../src/observability/metrics-store.js';
import { createFaultPlan } from '../../src/testing/faults.js';

const key = { name: 'test.Docs', version: '1.0.0', group: '' };
const metrics = () => createMetricsStore('docs').method('provider', key, 'm');
const identity = { id: 'x', via: 'test' };

/** One of each of Callisto's filters (both forms of `auth`). */
function builtins(): NamedFilter<never>[] {
  return [
    metricsServerFilter(metrics()),
    shutdownFilter({ refusing: false }),
    accessLogFilter({ write() {} }),
    providerDeadlineFilter(),
    providerDeadlineFilter({ serviceTime: createServiceTime() }),
    authFilter({ authenticators: [{ name: 'sync', authenticate: () => identity }] }),
    authFilter({ authenticators: [{ name: 'jwt', async: true, authenticate: async () => identity }] }),
    registryTokenFilter('registry-token'),
    accessRulesFilter({ rules: [], defaultAccess: 'allow' }),
    admissionFilter(),
    rateLimitFilter([]),
    executesFilter([]),
    decodeArgumentsFilter(),
    leakyRateFilter([]),
    observeServerFilter(),
    tracingServerFilter,
    createFaultPlan('docs').filter,
    validationFilter('test.Docs.m', {
      '~standard': { version: 1, vendor: 'test', validate: (v: unknown) => ({ value: v }) },
    } as never),
    metricsCallFilter(metrics()),
    createResultCache({ ttlMs: 1000, max: 10 }, () => new Uint8Array()).filter,
    consumerLimitFilter([createConsumerLimitState('test.Docs', { actives: 1 })]),
    tracingClientFilter(),
    mockFallbackFilter(() => undefined),
    attemptDeadlineFilter('test.Docs.m'),
    credentialsFilter('token'),
    observeClientFilter(),
    endpointStatsFilter(),
    outlierFilter({ record() {} }),
    metricsClientFilter(metrics()),
    throttleFilter('test.Docs.m', 2),
  ];
}

describe('docs/filters.md', () => {
  it('shows the table generated from the order table (run npm run docs:filters)', () => {
    const docs = fs.readFileSync(FILTER_DOCS, 'utf8');
    expect(withFilterTable(docs, renderFilterTable())).toBe(docs);
  });

  it('lists each position in running order, the user filters at their default', () => {
    const rows = renderFilterTable()
      .split('\n')
      .slice(2)
      .map((row) => row.split(' | '));
    for (const position of ['provider', 'call', 'attempt']) {
      const orders = rows.filter((row) => row[0] === `| ${position}`).map((row) => Number(row[1]));
      expect(orders).toEqual([...orders].sort((a, b) => a - b));
    }
    expect(rows.filter((row) => row[2] === '*yours*').map((row) => row[1])).toEqual(['500', '500', '500']);
  });
});

describe('the order table', () => {
  it('has every built-in filter with its name, position, order and form, and nothing that is not one', () => {
    const seen = new Set<string>();
    for (const filter of builtins()) {
      const entry = (FILTER_TABLE[filter.position] as Record<string, FilterOrderEntry | undefined>)[
        filter.name
      ];
      expect(entry, `${filter.position} ${filter.name}`).toBeDefined();
      expect(filter.order, `${filter.position} ${filter.name}`).toBe(entry!.order);
      const form = filter.step === undefined ? 'hooks' : 'wraps';
      expect(entry!.form, `${filter.position} ${filter.name}`).toContain(form);
      seen.add(`${filter.position} ${filter.name}`);
    }
    const listed = Object.entries(FILTER_TABLE).flatMap(([position, entries]) =>
      Object.keys(entries)
        .filter((name) => name !== 'user')
        .map((name) => `${position} ${name}`),
    );
    expect(listed.filter((entry) => !seen.has(entry))).toEqual([]);
  });
});
