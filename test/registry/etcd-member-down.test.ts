/**
 * An etcd registry on a 3-member cluster (etcd://m1,m2,m3) with one member down: the live members
 * serve everything and the registry never reports a disconnection. etcd3 opens lease keepalives and
 * watches on a random member, so without the member health policy and the keepalive retry
 * (src/registry/etcd-client.ts, etcd-registry.ts) one keepalive in three lands on the dead member and
 * the registry flaps between disconnected and connected (with a 2 s TTL, a keepalive every ~0.7 s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/create-registry.js';
import type { ProviderRecord } from '../../src/registry/provider-record.js';
import type { Registry, RegistryStatus } from '../../src/registry/registry.js';
import { type RegistryCluster, startEtcdCluster } from '../setup/clusters.js';
import { waitFor } from '../support/wait-for.js';
import { providerRecord, uniqueServiceKey } from './fixtures/records.js';

const TTL_MS = 2_000;
const OBSERVE_MS = 8_000;

let cluster: RegistryCluster;
const registries: Registry[] = [];

beforeAll(async () => {
  cluster = await startEtcdCluster();
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(registries.map((registry) => registry.close()));
  await cluster?.close();
});

async function open(): Promise<{ registry: Registry; statuses: RegistryStatus[] }> {
  const registry = await createRegistry(cluster.url, { ttlMs: TTL_MS });
  registries.push(registry);
  const statuses: RegistryStatus[] = [];
  registry.onStatus((status) => statuses.push(status));
  return { registry, statuses };
}

describe('etcd registry on a cluster with one member down', () => {
  it('keeps serving from the live members without reporting a disconnection', async () => {
    const key = uniqueServiceKey();
    const provider = await open();
    const consumer = await open();
    await provider.registry.register(providerRecord(key, 7001));
    let seen: ProviderRecord[] = [];
    await consumer.registry.subscribe(key, (list) => {
      seen = list;
    });
    // a consumer record gives the consumer's registry a lease to keep alive too
    await consumer.registry.registerConsumer({
      service: key.name,
      version: key.version,
      group: key.group,
      host: 'consumer-host',
      pid: process.pid,
      application: 'member-down',
      startTime: Date.now(),
    });
    await waitFor(() => seen.length === 1, 5_000);
    for (const { statuses } of [provider, consumer]) statuses.length = 0;

    const leader = await cluster.waitForLeader();
    const follower = cluster.members.find((member) => member !== leader)!;
    await follower.kill();
    const downAt = Date.now();
    // registrations and removals go on meanwhile, and are seen
    await provider.registry.register(providerRecord(key, 7002));
    await waitFor(() => seen.length === 2, 5_000, { message: 'a registration with a member down is seen' });
    await waitFor(() => Date.now() - downAt >= OBSERVE_MS, OBSERVE_MS + 1_000, { intervalMs: 100 });
    await provider.registry.unregister(providerRecord(key, 7001));
    await waitFor(() => seen.length === 1, 5_000, { message: 'a removal with a member down is seen' });

    console.log(
      `[registry] etcd, 1 of 3 members down for ${Date.now() - downAt} ms: provider statuses ` +
        `[${provider.statuses.join(',')}], consumer statuses [${consumer.statuses.join(',')}]`,
    );
    expect(provider.statuses).toEqual([]);
    expect(consumer.statuses).toEqual([]);
    expect(provider.registry.status).toBe('connected');
    expect(consumer.registry.status).toBe('connected');
  }, 60_000);
});
