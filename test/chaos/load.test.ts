/**
 * Chaos 6 — sustained load. One consumer keeps 10,000 calls in flight (every completion issues the next
 * call) for ~60 s against two provider processes found through the file registry. No call may fail,
 * the consumer's RSS must level off (the last third of the run peaks no higher than the first two thirds
 * plus a margin), and once the consumer app is closed it leaves no socket, server or timer behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { ChaosDef } from './fixtures/chaos-service.js';
import { routable } from './support/consumer.js';
import { startWindowLoad, summary } from './support/load.js';
import { killProviders, startProvider } from './support/provider-process.js';

const WINDOW = 10_000;
const DURATION_MS = 60_000;
const RSS_LIMIT_MIB = 1_024;
const dirs: string[] = [];

afterEach(async () => {
  await closeAll();
  await killProviders();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('chaos: sustained load', () => {
  it('keeps 10,000 calls in flight for a minute with bounded memory, no error and no leak', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callisto-chaos-load-'));
    dirs.push(dir);
    const registry = `file://${path.join(dir, 'registry')}`;
    const providers = await Promise.all(
      ['p-a', 'p-b'].map((name) => startProvider({ name, registry, ttlMs: 3_000 })),
    );
    const before = resourceCounts();
    const consumer = await testApp({
      application: 'chaos-consumer',
      registry,
      registryTtlMs: 3_000,
      consumer: { snapshotDir: '', warmupMs: 0, timeoutMs: 30_000 },
    });
    const ref = consumer.refer(ChaosDef);
    await ref.whoAmI();
    await waitFor(() => providers.every((p) => routable(consumer, p.address)), 10_000);

    const samples: Array<{ atMs: number; rss: number }> = [];
    const started = Date.now();
    const sampler = setInterval(() => {
      samples.push({ atMs: Date.now() - started, rss: process.memoryUsage().rss });
    }, 250);
    const load = startWindowLoad({
      window: WINDOW,
      call: (id) => (id % 2 === 0 ? ref.read(id) : ref.write(id)),
      method: (id) => (id % 2 === 0 ? 'read' : 'write'),
    });
    let report: Awaited<ReturnType<typeof load.stop>>;
    let maxInFlight = 0;
    try {
      await waitFor(
        () => {
          maxInFlight = Math.max(maxInFlight, load.inFlight);
          return Date.now() - started >= DURATION_MS || load.failures.length > 0;
        },
        DURATION_MS + 10_000,
        { intervalMs: 100 },
      );
    } finally {
      report = await load.stop();
      clearInterval(sampler);
    }
    await consumer.close();
    const after = resourceCounts();

    const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
    const peak = Math.max(...samples.map((s) => s.rss));
    const split = DURATION_MS * (2 / 3);
    const early = Math.max(...samples.filter((s) => s.atMs < split).map((s) => s.rss));
    const late = Math.max(...samples.filter((s) => s.atMs >= split).map((s) => s.rss));
    console.log(
      summary('load', report, {
        window: WINDOW,
        maxInFlight,
        peakRssMiB: mib(peak),
        peakRssFirstTwoThirdsMiB: mib(early),
        peakRssLastThirdMiB: mib(late),
        resourcesBefore: JSON.stringify(before),
        resourcesAfter: JSON.stringify(after),
      }),
    );
    expect(report.failures.slice(0, 10)).toEqual([]);
    expect(maxInFlight).toBe(WINDOW);
    expect(mib(peak)).toBeLessThan(RSS_LIMIT_MIB);
    expect(mib(late)).toBeLessThan(mib(early) * 1.25 + 32);
    for (const kind of ['TCPSocketWrap', 'TCPServerWrap', 'Timeout']) {
      expect(after[kind] ?? 0, kind).toBeLessThanOrEqual(before[kind] ?? 0);
    }
  }, 120_000);
});
