/**
 * A registry cluster loses its leader under load, one engine per test file (so they run in parallel):
 * a 3-member etcd cluster, a 3-server ZooKeeper ensemble, or Redis primary + replica + 3 Sentinels,
 * each member on its own namespaced host, addressed by every member (etcd://h1:2379,h2:2379,h3:2379,
 * zookeeper://h1:2181,..., redis-sentinel://h1:26379,.../callisto). Two providers and a consumer (apps in
 * the test process, reaching the members over the bridge) with a registry TTL of 6 s; the consumer sends
 * 500 calls/s, half idempotent reads, half non-idempotent writes.
 *
 *   1. the leader (etcd raft leader, ZooKeeper leader, Redis primary) is SIGKILLed: an election (a
 *      Sentinel failover) follows;
 *   2. right after the kill a third provider starts: its registration is taken once there is a leader
 *      again (startTimeoutMs covers the election);
 *   3. 0 failed calls; the consumer never drops the first two providers; it discovers the third and
 *      calls it;
 *   4. after the TTL has run out again since the kill, every registration is still there, held by the
 *      same lease (etcd) or session (ZooKeeper) as before: none was lost and re-created.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../../src/app/internals.js';
import type { CallistoApp } from '../../../src/index.js';
import { createRegistry } from '../../../src/registry/create-registry.js';
import type { ProviderRecord } from '../../../src/registry/provider-record.js';
import { providerPath } from '../../../src/registry/registry-paths.js';
import { ChaosDef, createChaosImpl } from '../../chaos/fixtures/chaos-service.js';
import { knownProviders } from '../../chaos/support/consumer.js';
import { startLoad, summary } from '../../chaos/support/load.js';
import { captureLogger } from '../../chaos/support/log-capture.js';
import type { ClusterOptions, RegistryCluster } from '../../setup/clusters.js';
import { closeAll, testApp } from '../../support/apps.js';
import { waitFor } from '../../support/wait-for.js';
import { createNetwork, type HostNetwork } from './netns.js';
import { registrationIdentities } from './registration-identity.js';

const TTL_MS = 6_000;
const RATE = 500;

export function runLeaderFailover(
  label: string,
  startCluster: (options: ClusterOptions) => Promise<RegistryCluster>,
): void {
  let network: HostNetwork;
  let cluster: RegistryCluster;

  beforeAll(async () => {
    network = await createNetwork();
    const hosts = await Promise.all(['r1', 'r2', 'r3'].map((name) => network.addHost(name)));
    cluster = await startCluster({ hosts });
  }, 120_000);

  afterAll(async () => {
    await closeAll();
    await cluster?.close();
    await network?.close();
  });

  describe(`registry cluster: ${label} loses its leader under load`, () => {
    it('no failed call, no lost registration, a provider started during the election is found', async () => {
      const executed = new Map<string, number>();
      const logs = new Map<string, ReturnType<typeof captureLogger>>();
      const loggerOf = (name: string) => {
        const capture = captureLogger();
        logs.set(name, capture);
        return capture.logger;
      };
      const provider = async (name: string, startTimeoutMs = 3_000): Promise<CallistoApp> => {
        const app = await testApp({
          application: name,
          logger: loggerOf(name),
          registry: cluster.url,
          registryTtlMs: TTL_MS,
          startTimeoutMs,
        });
        app.provide(
          ChaosDef,
          createChaosImpl({ name, onExecuted: () => executed.set(name, (executed.get(name) ?? 0) + 1) }),
        );
        return app.start();
      };
      const first = await Promise.all([provider('p-a'), provider('p-b')]);
      const consumer = await testApp({
        application: 'cluster-consumer',
        logger: loggerOf('consumer'),
        registry: cluster.url,
        registryTtlMs: TTL_MS,
        consumer: { snapshotDir: '', warmupMs: 0, timeoutMs: 5_000, loadbalance: 'roundrobin' },
      });
      const ref = consumer.refer(ChaosDef);
      await ref.whoAmI();
      await waitFor(() => first.every((app) => knownProviders(consumer).has(app.address!)), 15_000, {
        message: 'the consumer sees both providers',
      });
      const removed: string[] = [];
      for (const source of appInternals(consumer).consumer.directories().values()) {
        source.onChange((_added, gone) => removed.push(...gone.map((endpoint) => endpoint.address)));
      }
      const keysOf = (apps: CallistoApp[]) =>
        apps.flatMap((app) =>
          appInternals(app)
            .provider.records()
            .map((record) => providerPath('/callisto', record)),
        );
      const before = await registrationIdentities(cluster, keysOf(first));
      expect(before.every((identity) => identity.owner !== undefined)).toBe(true);

      const load = startLoad({
        ratePerSecond: RATE,
        call: (id) => (id % 2 === 0 ? ref.read(id) : ref.write(id)),
        method: (id) => (id % 2 === 0 ? 'read' : 'write'),
      });
      const timings: Record<string, number> = {};
      let late: CallistoApp | undefined;
      let next: { name: string } = { name: '?' };
      let report: Awaited<ReturnType<typeof load.stop>>;
      try {
        await load.settle(RATE);
        const leader = await cluster.waitForLeader();
        const killedAt = Date.now();
        await leader.kill();
        // started while the cluster elects: registered once there is a leader again
        const starting = provider('p-c', 30_000).then((app) => {
          timings['lateRegisteredMs'] = Date.now() - killedAt;
          late = app;
          return app;
        });
        next = await cluster.waitForLeader({ not: leader, timeoutMs: 45_000 });
        timings['electedMs'] = Date.now() - killedAt;
        const lateApp = await starting;
        await waitFor(() => knownProviders(consumer).has(lateApp.address!), 30_000, {
          message: 'the consumer discovers the provider started during the election',
        });
        timings['lateDiscoveredMs'] = Date.now() - killedAt;
        await waitFor(() => (executed.get('p-c') ?? 0) >= 50, 15_000, {
          message: 'the new provider is called',
        });
        // past the TTL again since the kill: a lease or session lost in the election would be gone by now
        await waitFor(() => Date.now() - killedAt >= TTL_MS + 2_000, TTL_MS + 30_000, { intervalMs: 100 });
        await load.settle(RATE);
      } finally {
        report = await load.stop();
      }
      // one leader lost: each client reports at most one disconnection (none if its server survived), no flapping
      const disconnections = Object.fromEntries(
        [...logs].map(([name, capture]) => [
          name,
          capture.lines.filter((line) => /: disconnected/.test(line.message)).length,
        ]),
      );
      console.log(
        summary(`${label} leader killed`, report, {
          ...timings,
          ttlMs: TTL_MS,
          newLeader: next.name,
          disconnections: JSON.stringify(disconnections),
        }),
      );
      expect(report.failures.slice(0, 10).map((f) => `${f.method} ${f.code} ${f.message}`)).toEqual([]);
      expect(report.ok).toBe(report.issued);
      expect(removed).toEqual([]);
      expect(Object.entries(disconnections).filter(([, count]) => count > 1)).toEqual([]);

      // every registration still there, held by the same lease / session as before the election
      const after = await registrationIdentities(cluster, keysOf(first));
      expect(after).toEqual(before);
      const lateIdentity = await registrationIdentities(cluster, keysOf([late!]));
      expect(lateIdentity[0]?.owner).toBeDefined();

      // a fresh client of the cluster (through the surviving members) lists all three
      const fresh = await createRegistry(cluster.url, { ttlMs: TTL_MS });
      try {
        let seen: ProviderRecord[] = [];
        await fresh.subscribe(ChaosDef, (list) => {
          seen = list;
        });
        const expected = [...first, late!].map((app) => app.address!).sort();
        await waitFor(
          () =>
            seen
              .map((r) => `${r.host}:${r.port}`)
              .sort()
              .join() === expected.join(),
          15_000,
          {
            message: 'a fresh client lists the three providers',
          },
        );
      } finally {
        await fresh.close();
      }
    }, 180_000);
  });
}
