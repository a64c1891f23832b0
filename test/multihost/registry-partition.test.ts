/**
 * Partitions between the registry and the rest, with calls running. etcd on its own host (reg); providers
 * p1, p2 (and p3, started later), a consumer c1, each on its own namespaced host; registry TTL 3 s.
 *
 * 1. The consumer loses the registry but not the providers: calls go on (0 failures) on the last known
 *    lists; a provider registered meanwhile is unknown to it until the partition heals, and is called
 *    then.
 * 2. A provider (p2) loses the registry but not its consumers. Its lease expires after the TTL and etcd
 *    deletes its entries. As documented (docs/registry.md, "Partitions"), the consumer then
 *    - removes p2 from a service that still has another provider (v1: p1 remains), once;
 *    - keeps p2 for a service it is the only provider of (v2) — empty-list protection: its connection
 *      is healthy — and calls it (0 failures), warning once;
 *    no flapping: nothing else changes while the partition lasts; when it heals p2 registers again and
 *    is added back to v1, once, and v2 does not change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RegistryCluster, startEtcdCluster } from '../setup/clusters.js';
import { waitFor } from '../support/wait-for.js';
import { type Agent, killAgents, type Observation, startAgent } from './support/agents.js';
import { createNetwork, type Host, type HostNetwork } from './support/netns.js';

const TTL_MS = 3_000;
const RATE = 200;

let network: HostNetwork;
let etcd: RegistryCluster;
let hosts: Record<'reg' | 'p1' | 'p2' | 'p3' | 'c1', Host>;
let p1: Agent;
let p2: Agent;
let p3: Agent;
let c1: Agent;
let addresses: { p1: string; p2: string };

beforeAll(async () => {
  network = await createNetwork();
  const made = await Promise.all(['reg', 'p1', 'p2', 'p3', 'c1'].map((name) => network.addHost(name)));
  hosts = { reg: made[0]!, p1: made[1]!, p2: made[2]!, p3: made[3]!, c1: made[4]! };
  etcd = await startEtcdCluster({ hosts: [hosts.reg], size: 1 });
  [p1, p2, p3, c1] = await Promise.all([
    startAgent(hosts.p1, 'p1'),
    startAgent(hosts.p2, 'p2'),
    startAgent(hosts.p3, 'p3'),
    startAgent(hosts.c1, 'c1'),
  ]);
  const common = { registry: etcd.url, ttlMs: TTL_MS, heartbeatMs: 1_000, host: '0.0.0.0' };
  const [one, two] = await Promise.all([p1.provider(common), p2.provider({ ...common, versions: 'both' })]);
  addresses = { p1: one.address, p2: two.address };
  await c1.consumer({
    registry: etcd.url,
    ttlMs: TTL_MS,
    heartbeatMs: 1_000,
    timeoutMs: 5_000,
    versions: 'both',
  });
  await waitFor(
    async () => {
      const seen = await c1.observe();
      return seen.known['v1']?.length === 2 && seen.known['v2']?.length === 1;
    },
    20_000,
    { message: 'the consumer sees p1 and p2 (v1) and p2 (v2)' },
  );
}, 120_000);

afterAll(async () => {
  await killAgents();
  await etcd?.close();
  await network?.close();
});

/** Cuts `host` and the registry host off from each other (both directions, silently). */
async function partitionFromRegistry(host: Host): Promise<() => Promise<void>> {
  await host.dropTo(hosts.reg.address);
  await hosts.reg.dropTo(host.address);
  return async () => {
    await host.undropTo(hosts.reg.address).catch(() => {});
    await hosts.reg.undropTo(host.address).catch(() => {});
  };
}

async function until(check: (seen: Observation) => boolean, timeoutMs: number, message: string) {
  return waitFor(
    async () => {
      const seen = await c1.observe();
      return check(seen) ? seen : undefined;
    },
    timeoutMs,
    { intervalMs: 50, message },
  );
}

async function settle(calls: number, name = 'main'): Promise<void> {
  const start = (await c1.loadStatus(name)).ok;
  await waitFor(async () => (await c1.loadStatus(name)).ok >= start + calls, 30_000, { intervalMs: 50 });
}

const elapsed = (since: number) => Date.now() - since;

describe('multi-host: partitions from the registry', () => {
  it('a consumer cut off from the registry keeps calling; a provider registered meanwhile is used after the heal', async () => {
    await c1.startLoad({ rate: RATE, mix: 'both' });
    let report: Awaited<ReturnType<Agent['stopLoad']>>;
    let p3Address = '';
    let heal: (() => Promise<void>) | undefined;
    const timings: Record<string, number> = {};
    try {
      await settle(RATE);
      const cutAt = Date.now();
      heal = await partitionFromRegistry(hosts.c1);
      await until((seen) => seen.registries[0]?.status === 'disconnected', 15_000, 'the consumer notices');
      timings['noticedMs'] = elapsed(cutAt);
      // registered while the consumer cannot hear about it
      p3Address = (
        await p3.provider({ registry: etcd.url, ttlMs: TTL_MS, heartbeatMs: 1_000, host: '0.0.0.0' })
      ).address;
      // two TTLs on the last known lists
      await waitFor(() => elapsed(cutAt) >= 2 * TTL_MS, 3 * TTL_MS, { intervalMs: 100 });
      const during = await c1.observe();
      expect(during.known['v1']?.sort()).toEqual([addresses.p1, addresses.p2].sort());
      const healedAt = Date.now();
      await heal();
      heal = undefined;
      await until(
        (seen) => seen.registries[0]?.status === 'connected' && (seen.known['v1'] ?? []).includes(p3Address),
        30_000,
        'the consumer reconnects and discovers p3',
      );
      timings['rediscoveredMs'] = elapsed(healedAt);
      await until((seen) => (seen.picks[p3Address]?.count ?? 0) > 0, 15_000, 'p3 is called');
      await settle(RATE);
    } finally {
      await heal?.();
      report = await c1.stopLoad();
    }
    console.log(
      `[multihost] consumer cut from registry: calls=${report.issued} ok=${report.ok} failed=${report.failures.length} ` +
        `${Object.entries(timings)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
    );
    expect(report.failures.slice(0, 5)).toEqual([]);
    expect(report.ok).toBe(report.issued);
  }, 120_000);

  it('a provider cut off from the registry: removed where others remain, kept where it is the last, no flapping', async () => {
    await c1.startLoad({ rate: RATE, mix: 'both', version: 'v1', name: 'v1' });
    await c1.startLoad({ rate: 50, mix: 'both', version: 'v2', name: 'v2' });
    const reports: Record<string, Awaited<ReturnType<Agent['stopLoad']>>> = {};
    let heal: (() => Promise<void>) | undefined;
    const timings: Record<string, number> = {};
    let changesAtCut = 0;
    let duringPartition: Observation['changes'] = [];
    let afterHeal: Observation['changes'] = [];
    try {
      await settle(RATE, 'v1');
      changesAtCut = (await c1.observe()).changes.length;
      const cutAt = Date.now();
      heal = await partitionFromRegistry(hosts.p2);
      await until(
        (seen) => !(seen.known['v1'] ?? []).includes(addresses.p2),
        15_000,
        'the consumer drops p2 from v1 once its lease expired',
      );
      timings['removedFromV1Ms'] = elapsed(cutAt);
      // stay partitioned well past the empty-list protection's 5 s confirmation delay
      await waitFor(() => elapsed(cutAt) >= TTL_MS + 8_000, TTL_MS + 10_000, { intervalMs: 100 });
      const partitioned = await c1.observe();
      duringPartition = partitioned.changes.slice(changesAtCut);
      expect(partitioned.known['v2']).toEqual([addresses.p2]);
      const healedAt = Date.now();
      await heal();
      heal = undefined;
      await until(
        (seen) => (seen.known['v1'] ?? []).includes(addresses.p2),
        30_000,
        'p2 registers again and is back in v1',
      );
      timings['backInV1Ms'] = elapsed(healedAt);
      await settle(RATE, 'v1');
      const healed = await c1.observe();
      afterHeal = healed.changes.slice(changesAtCut + duringPartition.length);
      const holds = healed.warnings.filter((w) => /zero providers/.test(w.message));
      timings['holdWarnings'] = holds.length;
      expect(holds.length).toBeLessThanOrEqual(1);
    } finally {
      await heal?.();
      reports['v1'] = await c1.stopLoad('v1');
      reports['v2'] = await c1.stopLoad('v2');
    }
    const describeChanges = (changes: Observation['changes']) =>
      changes.map(
        (c) => `${c.version}${c.added.map((a) => `+${a}`).join('')}${c.removed.map((a) => `-${a}`).join('')}`,
      );
    console.log(
      `[multihost] provider cut from registry: v1 calls=${reports['v1']!.issued} failed=${reports['v1']!.failures.length} ` +
        `v2 calls=${reports['v2']!.issued} failed=${reports['v2']!.failures.length} ` +
        `${Object.entries(timings)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} during=[${describeChanges(duringPartition)}] after=[${describeChanges(afterHeal)}]`,
    );
    // removed once from v1, nothing else while partitioned; added back once; v2 never changed
    expect(duringPartition.map((c) => ({ version: c.version, added: c.added, removed: c.removed }))).toEqual([
      { version: 'v1', added: [], removed: [addresses.p2] },
    ]);
    expect(afterHeal.map((c) => ({ version: c.version, added: c.added, removed: c.removed }))).toEqual([
      { version: 'v1', added: [addresses.p2], removed: [] },
    ]);
    expect(reports['v1']!.failures.slice(0, 5)).toEqual([]);
    expect(reports['v2']!.failures.slice(0, 5)).toEqual([]);
  }, 120_000);
});
