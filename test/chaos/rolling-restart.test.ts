/**
 * Chaos 1 — rolling restart. Three provider processes on the embedded file registry (TTL 3 s) serve a
 * consumer driving ~2,000 calls/s (half idempotent reads, half non-idempotent writes). Each provider in
 * turn is stopped gracefully (SIGTERM: unregister, go-away, drain, close) and replaced by a new process;
 * the next one is restarted once the consumer routes to the newcomer. Not a single call may fail.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { ChaosDef } from './fixtures/chaos-service.js';
import { routable } from './support/consumer.js';
import { startLoad, summary } from './support/load.js';
import { killProviders, type ProviderProcess, startProvider } from './support/provider-process.js';

const TTL_MS = 3_000;
const RATE = 2_000;
const dirs: string[] = [];

afterEach(async () => {
  await closeAll();
  await killProviders();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('chaos: rolling restart', () => {
  it('restarts every provider under load without a failed call', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'callisto-chaos-rolling-'));
    dirs.push(dir);
    const registry = `file://${path.join(dir, 'registry')}`;
    const provider = (name: string) => startProvider({ name, registry, ttlMs: TTL_MS });
    const providers: ProviderProcess[] = await Promise.all(['a', 'b', 'c'].map((n) => provider(`p-${n}1`)));

    const consumer = await testApp({
      application: 'chaos-consumer',
      registry,
      registryTtlMs: TTL_MS,
      consumer: { warmupMs: 0, snapshotDir: '', timeoutMs: 5_000, loadbalance: 'roundrobin' },
    });
    const ref = consumer.refer(ChaosDef);
    await ref.whoAmI();
    await waitFor(() => providers.every((p) => routable(consumer, p.address)), 10_000, {
      message: 'the consumer sees the three providers',
    });

    const load = startLoad({
      ratePerSecond: RATE,
      call: (id) => (id % 2 === 0 ? ref.read(id) : ref.write(id)),
      method: (id) => (id % 2 === 0 ? 'read' : 'write'),
    });
    const restarts: string[] = [];
    try {
      await load.settle(RATE * 3);
      for (let i = 0; i < providers.length; i++) {
        const old = providers[i]!;
        const began = Date.now();
        const exit = await old.stop();
        expect(exit, `${old.name} exits cleanly on SIGTERM:\n${old.stderr()}`).toEqual({
          code: 0,
          signal: null,
        });
        const stoppedMs = Date.now() - began;
        const fresh = await provider(`p-${'abc'[i]}2`);
        providers[i] = fresh;
        await waitFor(() => routable(consumer, fresh.address), 10_000, {
          message: `the consumer routes to ${fresh.name}`,
        });
        restarts.push(`${old.name}->${fresh.name}:stop=${stoppedMs}ms,total=${Date.now() - began}ms`);
        await load.settle(RATE * 5);
      }
      await load.settle(RATE * 3);
    } finally {
      const report = await load.stop();
      console.log(summary('rolling restart', report, { restarts: restarts.join(' ') }));
      expect(report.failures.slice(0, 10)).toEqual([]);
      expect(report.ok).toBe(report.issued);
    }
    expect(restarts).toHaveLength(3);
  }, 90_000);
});
