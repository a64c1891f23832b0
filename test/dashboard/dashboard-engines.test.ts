/**
 * The dashboard over several server-backed registries at once (the shared etcd, ZooKeeper and Redis of
 * test/setup, each under a root of its own): one service listed once with the registries that hold
 * it, a provider registered in two of them counted once, and a provider that leaves gone from the page.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { waitFor } from '../support/wait-for.js';
import {
  type ProviderProcess,
  type RunningDashboard,
  SEE_MS,
  startDashboard,
  startProvider,
} from './support/dashboard-env.js';

const root = `/dashboard-${randomUUID().slice(0, 8)}`;
let etcd: string;
let zookeeper: string;
let redis: string;
let dashboard: RunningDashboard;
let both: ProviderProcess;
let onZooKeeper: ProviderProcess;

beforeAll(async () => {
  etcd = `etcd://${sharedServerAddress('etcd')}?root=${root}`;
  zookeeper = `zookeeper://${sharedServerAddress('zookeeper')}?root=${root}`;
  redis = `redis://${sharedServerAddress('redis')}?root=${root}`;
  [both, onZooKeeper] = await Promise.all([
    startProvider({ registries: [etcd, redis], application: 'on-etcd-and-redis' }),
    startProvider({ registry: zookeeper, application: 'on-zookeeper' }),
  ]);
  dashboard = await startDashboard({ registries: [etcd, zookeeper, redis] });
}, 90_000);

afterAll(async () => {
  await dashboard?.close();
  await Promise.allSettled([both?.stop(), onZooKeeper?.stop()]);
});

interface Overview {
  registries: Array<{ address: string; status: string }>;
  services: Array<{ name: string; providers: number; registries: string[] }>;
}

interface ServicePage {
  keys: Array<{ providers: Array<{ address: string; application: string; registries: string[] }> }>;
}

const api = async <T>(path: string): Promise<T> =>
  (await (await fetch(`${dashboard.url}${path}`)).json()) as T;

describe('the dashboard on etcd, ZooKeeper and Redis at once', () => {
  it('lists the service once, from every registry that holds it, each provider once', async () => {
    const overview = await waitFor(async () => {
      const answer = await api<Overview>('api/overview');
      const service = answer.services.find((s) => s.name === 'shop.Inventory');
      return service?.registries.length === 3 && service.providers === 2 ? answer : undefined;
    }, SEE_MS);
    expect(overview.registries.map((r) => r.status)).toEqual(['connected', 'connected', 'connected']);
    expect(overview.services).toEqual([
      expect.objectContaining({ name: 'shop.Inventory', providers: 2, registries: [etcd, zookeeper, redis] }),
    ]);
    const page = await api<ServicePage>('api/service?name=shop.Inventory');
    const providers = page.keys[0]!.providers.map((p) => ({ address: p.address, registries: p.registries }));
    expect(providers).toEqual(
      expect.arrayContaining([
        { address: both.address, registries: [etcd, redis] },
        { address: onZooKeeper.address, registries: [zookeeper] },
      ]),
    );
    expect(providers).toHaveLength(2);
  });

  it('drops a provider that leaves, on its engine', async () => {
    await onZooKeeper.stop();
    await waitFor(async () => {
      const page = await api<ServicePage>('api/service?name=shop.Inventory');
      return page.keys[0]?.providers.map((p) => p.address).join() === both.address;
    }, SEE_MS);
  });
});
