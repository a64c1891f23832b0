/**
 * Chaos 3 — registry outage, one engine per test file (so that vitest runs them in parallel), each on a
 * PRIVATE server (test/setup/servers.ts) so that no other suite is disturbed:
 *
 *   1. two providers and a consumer (each an app with its own registry client) on the server; the
 *      consumer drives ~1,000 calls/s, half idempotent reads, half non-idempotent writes
 *   2. the server is stopped for ~20 s of load, then restarted on the same port with the same data dir
 *   3. no call fails; every client reports `connected` again; the providers are registered again (a
 *      fresh registry client sees them); the consumer is resynchronised: a provider started after the
 *      restart is discovered and receives calls
 *   4. with the server down, a new consumer starts: it falls back to its snapshot (consumer.snapshotDir,
 *      written by the first consumer) and its calls succeed
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../../src/app/internals.js';
import { type CallistoApp, RpcError } from '../../../src/index.js';
import { createRegistry } from '../../../src/registry/create-registry.js';
import type { ProviderRecord } from '../../../src/registry/provider-record.js';
import type { TestServer } from '../../setup/servers.js';
import { closeAll, testApp } from '../../support/apps.js';
import { waitFor } from '../../support/wait-for.js';
import { ChaosDef, createChaosImpl } from '../fixtures/chaos-service.js';
import { knownProviders } from './consumer.js';
import { startLoad, summary } from './load.js';

const TTL_MS = 3_000;
const RATE = 1_000;
const OUTAGE_CALLS = RATE * 20;

async function registriesConnected(app: CallistoApp): Promise<boolean> {
  const registries = await appInternals(app).registries.created();
  return registries.length > 0 && registries.every((registry) => registry.status === 'connected');
}

export function runRegistryOutage(kind: string, startPrivateServer: () => Promise<TestServer>): void {
  const cleanups: Array<() => Promise<void> | void> = [];

  afterEach(async () => {
    await closeAll();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  describe(`chaos: ${kind} registry outage`, () => {
    it('keeps calls flowing through a 20 s outage, re-registers, resynchronises, starts from the snapshot', async () => {
      const server = await startPrivateServer();
      cleanups.push(() => server.close());
      const dir = mkdtempSync(path.join(tmpdir(), `callisto-chaos-${kind}-`));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const snapshotDir = path.join(dir, 'snapshots');
      const executed = new Map<string, number>();

      const provider = async (name: string): Promise<CallistoApp> => {
        const app = await testApp({ application: name, registry: server.url, registryTtlMs: TTL_MS });
        app.provide(
          ChaosDef,
          createChaosImpl({ name, onExecuted: () => executed.set(name, (executed.get(name) ?? 0) + 1) }),
        );
        return app.start();
      };
      const consumerApp = () =>
        testApp({
          application: 'chaos-consumer',
          registry: server.url,
          registryTtlMs: TTL_MS,
          consumer: { snapshotDir, warmupMs: 0, timeoutMs: 5_000, loadbalance: 'roundrobin' },
        });

      const providers = await Promise.all([provider('p-a'), provider('p-b')]);
      const addresses = providers.map((p) => p.address!);
      const consumer = await consumerApp();
      const ref = consumer.refer(ChaosDef);
      await ref.whoAmI();
      await waitFor(() => addresses.every((a) => knownProviders(consumer).has(a)), 10_000, {
        message: 'the consumer sees both providers',
      });
      const everyApp = () => [...providers, consumer];

      const load = startLoad({
        ratePerSecond: RATE,
        call: (id) => (id % 2 === 0 ? ref.read(id) : ref.write(id)),
        method: (id) => (id % 2 === 0 ? 'read' : 'write'),
      });
      let outageMs = 0;
      let recoveredMs = 0;
      let late: CallistoApp | undefined;
      let report: Awaited<ReturnType<typeof load.stop>>;
      try {
        await load.settle(RATE * 2);
        const stoppedAt = Date.now();
        await server.stop();
        await waitFor(
          async () => {
            const statuses = await Promise.all(everyApp().map(registriesConnected));
            return statuses.every((connected) => !connected);
          },
          15_000,
          { intervalMs: 50, message: 'every client notices the outage' },
        );
        await load.settle(OUTAGE_CALLS);
        outageMs = Date.now() - stoppedAt;

        const restartedAt = Date.now();
        await server.restart();
        await waitFor(
          async () => (await Promise.all(everyApp().map(registriesConnected))).every(Boolean),
          20_000,
          { intervalMs: 50, message: 'every client reconnects' },
        );
        recoveredMs = Date.now() - restartedAt;

        // Registered again: a fresh client sees both providers.
        const fresh = await createRegistry(server.url, { ttlMs: TTL_MS });
        cleanups.push(() => fresh.close());
        let seen: ProviderRecord[] = [];
        await fresh.subscribe(ChaosDef, (list) => {
          seen = list;
        });
        await waitFor(() => addresses.every((a) => seen.some((r) => `${r.host}:${r.port}` === a)), 15_000, {
          message: 'a fresh registry client sees the providers again',
        });

        // Resynchronised: a provider started now is discovered and used.
        late = await provider('p-c');
        await waitFor(() => knownProviders(consumer).has(late!.address!), 15_000, {
          message: 'the consumer discovers a provider started after the restart',
        });
        await waitFor(() => (executed.get('p-c') ?? 0) >= 100, 15_000, {
          message: 'the new provider receives calls',
        });
        await load.settle(RATE * 2);
      } finally {
        report = await load.stop();
      }
      console.log(
        summary(`${kind} outage`, report, {
          outageMs,
          reconnectedAfterRestartMs: recoveredMs,
          callsOnNewProvider: executed.get('p-c') ?? 0,
        }),
      );
      expect(report.failures.slice(0, 10)).toEqual([]);
      expect(report.ok).toBe(report.issued);

      // A consumer starting while the registry is down uses the snapshot the first one wrote.
      await consumer.close();
      await server.stop();
      const cold = await consumerApp();
      const coldRef = cold.refer(ChaosDef);
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => coldRef.read(i)));
      const snapshotMs = Date.now() - started;
      expect(answers).toEqual(Array.from({ length: 60 }, (_, i) => i));
      expect([...knownProviders(cold)].sort()).toEqual([...addresses, late!.address!].sort());
      const writes = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => coldRef.write(i)));
      expect(
        writes.filter((w) => w.status === 'rejected').map((w) => RpcError.from(w.reason).message),
      ).toEqual([]);
      console.log(`[chaos] ${kind} cold start from snapshot: firstCallsMs=${snapshotMs} calls=120 failed=0`);
      // Bring the server back so that the apps close without waiting on it.
      await server.restart();
    }, 150_000);
  });
}
