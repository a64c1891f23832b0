/**
 * The registry conformance suite: one behavioural contract (src/registry/registry.ts), the same cases
 * run against every implementation and real servers. Each engine has its own test file calling
 * `runRegistryConformance`, so the engines run in parallel.
 *
 * Cases that stop or restart a server use a private server (`target.privateServer`), never the shared
 * one other suites are using. Waiting is always polling for a condition with a deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { followRegistryLists, type RegistryLists } from '../../src/consumer/registry-lists.js';
import { createRegistry } from '../../src/registry/create-registry.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import { MAX_PROVIDER_WEIGHT, MAX_RECORD_BYTES } from '../../src/registry/record-validation.js';
import type { Registry, RegistryStatus } from '../../src/registry/registry.js';
import type { TestServer } from '../setup/servers.js';
import { waitFor } from '../support/wait-for.js';
import { startChildProvider } from './fixtures/child-provider.js';
import { follow } from './fixtures/follower.js';
import { escapeRegExp } from './fixtures/log-lines.js';
import type { RawStore } from './fixtures/raw-store.js';
import { readEntry } from './fixtures/read-entry.js';
import { addressesOf, providerRecord, uniqueServiceKey } from './fixtures/records.js';
import { countResources, leakedSince } from './fixtures/resources.js';

export interface ConformanceTarget {
  /** The address kind, e.g. `etcd`. */
  kind: string;
  /** TTL every registry of the suite uses (short, so SIGKILL cases stay quick). */
  ttlMs: number;
  /** Address of the registry the ordinary cases share. */
  address(): string;
  /** Writes entries by hand into the shared registry's layout, with the engine's own client. */
  rawStore(): Promise<RawStore>;
  /** Starts a private server for outage cases; absent for kinds without a server (file). */
  privateServer?: () => Promise<TestServer>;
  /**
   * Entries may disappear for a moment across a restart even when the server keeps its data: Redis
   * without persistence forgets everything; ZooKeeper expires the sessions when the restart (plus the
   * reconnect backoff) outlasts the short session timeout of the tests.
   */
  restartMayDropEntries?: boolean;
}

/** Slack on top of "TTL + 1 s" for process scheduling on a loaded 2-core machine. */
const MARGIN_MS = 300;

export function runRegistryConformance(target: ConformanceTarget): void {
  const { kind, ttlMs } = target;
  const cleanups: Array<() => Promise<void> | void> = [];
  const later = (fn: () => Promise<void> | void): void => {
    cleanups.push(fn);
  };

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const log = process.env['CALLISTO_TEST_REGISTRY_LOG']
    ? (level: string, message: string) => console.error(`${new Date().toISOString()} [${level}] ${message}`)
    : undefined;

  const open = async (address = target.address(), maxBackoffMs?: number): Promise<Registry> => {
    const registry = await createRegistry(address, {
      ttlMs,
      log,
      ...(maxBackoffMs === undefined ? {} : { maxBackoffMs }),
    });
    later(() => registry.close());
    return registry;
  };

  const statusLog = (registry: Registry): RegistryStatus[] => {
    const seen: RegistryStatus[] = [];
    registry.onStatus((status) => seen.push(status));
    return seen;
  };

  describe(`registry conformance: ${kind}`, () => {
    it('delivers an empty list for an unknown service and resolves subscribe after it', async () => {
      const consumer = await open();
      const f = await follow(consumer, uniqueServiceKey());
      expect(f.latest()).toEqual([]);
      await waitFor(() => consumer.status === 'connected', 5_000);
    });

    it('registers a provider and another instance discovers the same record', async () => {
      const key = uniqueServiceKey();
      const [provider, consumer] = [await open(), await open()];
      const record = providerRecord(key, 20_001);
      await provider.register(record);
      const f = await follow(consumer, key);
      await waitFor(() => f.has('127.0.0.1:20001'), 5_000);
      expect(f.latest()).toEqual([record]);
    });

    it('follows additions, replacements and removals with full lists, never the same list twice', async () => {
      const key = uniqueServiceKey();
      const [provider, consumer] = [await open(), await open()];
      const f = await follow(consumer, key);
      await provider.register(providerRecord(key, 20_001));
      await provider.register(providerRecord(key, 20_002));
      await waitFor(() => f.has('127.0.0.1:20001', '127.0.0.1:20002'), 5_000);
      await provider.register(providerRecord(key, 20_001, { weight: 7 }));
      await waitFor(() => f.latest()?.find((r) => r.port === 20_001)?.weight === 7, 5_000);
      await provider.unregister(providerRecord(key, 20_001));
      await waitFor(() => f.has('127.0.0.1:20002'), 5_000);
      await provider.unregister(providerRecord(key, 20_002));
      await waitFor(() => f.has(), 5_000);
      const lists = f.deliveries.map((d) => JSON.stringify(d.list));
      for (let i = 1; i < lists.length; i++) expect(lists[i]).not.toBe(lists[i - 1]);
    });

    it('gives two consumers (two instances) the same list', async () => {
      const key = uniqueServiceKey();
      const [provider, first, second] = [await open(), await open(), await open()];
      const [a, b] = [await follow(first, key), await follow(second, key)];
      await provider.register(providerRecord(key, 20_001));
      await provider.register(providerRecord(key, 20_003));
      const both = ['127.0.0.1:20001', '127.0.0.1:20003'];
      await waitFor(() => a.has(...both) && b.has(...both), 5_000);
      expect(a.latest()).toEqual(b.latest());
      // a late subscriber on an instance that already follows the service gets the list at once
      const c = await follow(first, key);
      expect(c.latest()).toEqual(a.latest());
    });

    it('accepts consumer registrations and removes them, two consumers of one process apart', async () => {
      const key = uniqueServiceKey();
      const registry = await open();
      const consumerRecord = {
        service: key.name,
        version: key.version,
        group: key.group,
        host: '127.0.0.1',
        pid: process.pid,
        application: 'conformance',
        startTime: Date.now(),
        instance: '1',
      };
      // another app (or directory) of the same process: same host and pid, its own entry
      const other = { ...consumerRecord, application: 'conformance-2', instance: '2' };
      const address = target.address();
      const pathOf = (record: typeof consumerRecord) =>
        `/callisto/${servicePathSegment(key)}/consumers/${record.host}:${record.pid}:${record.instance}`;
      await registry.registerConsumer(consumerRecord);
      await registry.registerConsumer(other);
      // Stored where the layout says, readable with the engine's own client, as the record's JSON.
      await waitFor(async () => (await readEntry(address, pathOf(consumerRecord))) !== undefined, 5_000);
      expect(JSON.parse((await readEntry(address, pathOf(consumerRecord)))!)).toEqual(consumerRecord);
      expect(JSON.parse((await readEntry(address, pathOf(other)))!)).toEqual(other);
      await registry.unregisterConsumer(consumerRecord);
      await waitFor(async () => (await readEntry(address, pathOf(consumerRecord))) === undefined, 5_000);
      expect(JSON.parse((await readEntry(address, pathOf(other)))!)).toEqual(other); // only that one removed
      await registry.unregisterConsumer(other);
      await waitFor(async () => (await readEntry(address, pathOf(other))) === undefined, 5_000);
    });

    it('lists every service it holds with provider and consumer counts, and the consumers of one', async () => {
      const lines: string[] = [];
      const registry = await createRegistry(target.address(), {
        ttlMs,
        log: (level, message) => lines.push(`${level} ${message}`),
      });
      later(() => registry.close());
      if (!registry.services || !registry.consumers) throw new Error(`the ${kind} registry lists nothing`);
      const base = uniqueServiceKey('listing');
      const v2 = { ...base, version: '2.0.0' };
      const blue = { ...base, group: 'blue' };
      const consumedOnly = uniqueServiceKey('listing');
      const consumerOf = (key: typeof base, pid: number) => ({
        service: key.name,
        version: key.version,
        group: key.group,
        host: '127.0.0.1',
        pid,
        application: 'conformance',
        startTime: 1_700_000_000_000,
      });
      const provider = await open();
      const other = await open();
      await provider.register(providerRecord(base, 20_041));
      await other.register(providerRecord(base, 20_042));
      await provider.register(providerRecord(v2, 20_043));
      await provider.register(providerRecord(blue, 20_044));
      await provider.registerConsumer(consumerOf(base, 71));
      await other.registerConsumer(consumerOf(base, 72));
      await provider.registerConsumer(consumerOf(consumedOnly, 73));
      const mine = async () =>
        (await registry.services!()).filter((s) => s.name === base.name || s.name === consumedOnly.name);
      const expected = [
        { name: base.name, version: '1.0.0', group: '', providers: 2, consumers: 2 },
        { name: base.name, version: '1.0.0', group: 'blue', providers: 1, consumers: 0 },
        { name: base.name, version: '2.0.0', group: '', providers: 1, consumers: 0 },
        { name: consumedOnly.name, version: '1.0.0', group: '', providers: 0, consumers: 1 },
      ].sort((a, b) => (a.name === b.name ? 0 : a.name < b.name ? -1 : 1));
      await waitFor(async () => JSON.stringify(await mine()) === JSON.stringify(expected), 5_000, {
        message: 'the listing never matched',
      }).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await mine())}`);
      });
      expect(await registry.consumers(base)).toEqual([consumerOf(base, 71), consumerOf(base, 72)]);
      expect(await registry.consumers(blue)).toEqual([]);

      // a bad consumer entry, written by hand, is skipped and logged once (not on every read)
      const store = await target.rawStore();
      later(() => store.close());
      const badPath = `/callisto/${servicePathSegment(base)}/consumers/127.0.0.1:bad`;
      await store.put(badPath, JSON.stringify({ ...consumerOf(base, 74), pid: 'seventy-four' }));
      const baseListing = async () =>
        (await mine()).find((s) => s.name === base.name && s.version === '1.0.0' && s.group === '');
      await waitFor(async () => (await baseListing())?.consumers === 3, 5_000);
      // what an expired entry may leave behind (a stale file, a Redis member without its key) is not counted
      if (store.putExpired) {
        await store.putExpired(
          `/callisto/${servicePathSegment(base)}/providers/127.0.0.1:20049`,
          JSON.stringify(providerRecord(base, 20_049)),
        );
        await store.putExpired(`/callisto/${servicePathSegment(blue)}/consumers/127.0.0.1:75`, '{}');
        expect(await baseListing()).toMatchObject({ providers: 2, consumers: 3 });
        expect(await registry.consumers(blue)).toEqual([]);
      }
      expect(await registry.consumers(base)).toEqual([consumerOf(base, 71), consumerOf(base, 72)]);
      expect(await registry.consumers(base)).toHaveLength(2);
      const named = lines.filter((line) => line.includes(`${store.keyOf(badPath)}:`));
      expect(named).toEqual([
        `warn registry ${target.address()}: skipped consumer entry ${store.keyOf(badPath)}: pid "seventy-four" is not a process id`,
      ]);

      // what is removed leaves the listing; a key with no entry left is not listed at all
      await provider.unregister(providerRecord(v2, 20_043));
      await provider.unregister(providerRecord(blue, 20_044));
      await provider.unregisterConsumer(consumerOf(consumedOnly, 73));
      await other.close();
      await waitFor(
        async () =>
          JSON.stringify(await mine()) ===
          JSON.stringify([{ name: base.name, version: '1.0.0', group: '', providers: 1, consumers: 2 }]),
        5_000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await mine())}`);
      });
      expect(await registry.consumers(base)).toEqual([consumerOf(base, 71)]);
    });

    it('checks stored records where it reads them: one bad entry is skipped and logged once, never more', async () => {
      const key = uniqueServiceKey('records');
      const dir = `/callisto/${servicePathSegment(key)}/providers`;
      const store = await target.rawStore();
      later(() => store.close());
      const good = (port: number, fields: Record<string, unknown> = {}) =>
        JSON.stringify({ ...providerRecord(key, port), ...fields });
      const { startTime: _omitted, ...withoutStartTime } = providerRecord(key, 30_001);
      // valid, with quirks the reader must tame: no startTime, a huge weight, fields it does not know
      await store.put(
        `${dir}/127.0.0.1:30001`,
        JSON.stringify({
          ...withoutStartTime,
          weight: 1e308,
          extra: { nested: true },
          tags: { zone: 'a', n: 1 },
        }),
      );
      await store.put(`${dir}/127.0.0.1:30002`, good(30_002, { weight: -5 }));
      const bad: Record<string, string | Buffer> = {
        'port-70000': good(70_000),
        'port-negative': good(-1),
        'port-fraction': good(1.5),
        'port-string': good(0, { port: '30003' }),
        'host-empty': good(30_004, { host: '' }),
        'host-with-space': good(30_004, { host: '127.0.0.1 evil' }),
        'host-missing': good(30_004, { host: undefined }),
        'weight-text': good(30_005, { weight: 'heavy' }),
        'start-text': good(30_005, { startTime: 'yesterday' }),
        'protocol-other': good(30_005, { protocol: 'dubbo' }),
        'json-array': '[1,2,3]',
        'partial-write': good(30_006).slice(0, 40),
        'too-large': good(30_007, { tags: { pad: 'x'.repeat(MAX_RECORD_BYTES) } }),
      };
      for (const [name, value] of Object.entries(bad)) await store.put(`${dir}/${name}`, value);
      const unreadable = await store.putUnreadable(dir);
      const badPaths = [...Object.keys(bad).map((name) => `${dir}/${name}`), ...unreadable];

      const lines: string[] = [];
      const consumer = await createRegistry(target.address(), {
        ttlMs,
        log: (level, message) => lines.push(`${level} ${message}`),
      });
      later(() => consumer.close());
      const before = Date.now();
      const f = await follow(consumer, key);
      await waitFor(() => f.has('127.0.0.1:30001', '127.0.0.1:30002'), 5_000);
      const after = Date.now();
      const [first, second] = f.latest()!;
      expect(first!.weight).toBe(MAX_PROVIDER_WEIGHT);
      expect(first!.startTime).toBeGreaterThanOrEqual(before - 1_000); // "just started": first seen now
      expect(first!.startTime).toBeLessThanOrEqual(after);
      expect(first).not.toHaveProperty('extra');
      expect(first!.tags).toEqual({ zone: 'a' });
      expect(second!.weight).toBe(0);

      // the bad entries never stop the list from following changes, whoever writes them
      const provider = await open();
      await provider.register(providerRecord(key, 30_010));
      await waitFor(() => f.has('127.0.0.1:30001', '127.0.0.1:30002', '127.0.0.1:30010'), 5_000);
      await store.put(`${dir}/partial-write`, good(30_006)); // the writer finishes its write
      await waitFor(
        () => f.has('127.0.0.1:30001', '127.0.0.1:30002', '127.0.0.1:30006', '127.0.0.1:30010'),
        5_000,
      );
      await provider.unregister(providerRecord(key, 30_010));
      await waitFor(() => f.has('127.0.0.1:30001', '127.0.0.1:30002', '127.0.0.1:30006'), 5_000);
      expect(f.deliveries.at(-1)!.list.find((r) => r.port === 30_001)!.startTime).toBe(first!.startTime);

      // one warning per bad entry (not per re-read), naming the registry and the key or file
      for (const path of badPaths) {
        const named = lines.filter((line) => line.includes(`${store.keyOf(path)}:`));
        expect(named, `log lines naming ${path}:\n${lines.join('\n')}`).toHaveLength(1);
        expect(named[0]).toMatch(new RegExp(`^warn registry ${escapeRegExp(target.address())}: skipped `));
      }
      expect(lines.filter((line) => line.includes('skipped'))).toHaveLength(badPaths.length);
    });

    it('shows a clean close at once (well under the TTL)', async () => {
      const key = uniqueServiceKey();
      const consumer = await open();
      const provider = await open();
      await provider.register(providerRecord(key, 20_004));
      const f = await follow(consumer, key);
      await waitFor(() => f.has('127.0.0.1:20004'), 5_000);
      const closedAt = Date.now();
      await provider.close();
      await waitFor(() => f.removedAt('127.0.0.1:20004', closedAt), 5_000);
      const took = (f.removedAt('127.0.0.1:20004', closedAt) ?? 0) - closedAt;
      console.log(`[${kind}] clean close -> removal seen after ${took} ms`);
      expect(took).toBeLessThan(Math.min(1_000, ttlMs / 2));
    });

    it('drops a SIGKILLed provider within TTL + 1 s', async () => {
      const key = uniqueServiceKey();
      const consumer = await open();
      const f = await follow(consumer, key);
      const child = await startChildProvider(target.address(), ttlMs, providerRecord(key, 20_005));
      later(() => child.kill());
      await waitFor(() => f.has('127.0.0.1:20005'), 5_000);
      const killedAt = Date.now();
      await child.kill();
      await waitFor(() => f.removedAt('127.0.0.1:20005', killedAt), ttlMs + 5_000);
      const took = (f.removedAt('127.0.0.1:20005', killedAt) ?? 0) - killedAt;
      console.log(`[${kind}] SIGKILL -> removal seen after ${took} ms (ttl ${ttlMs} ms)`);
      expect(took).toBeLessThan(ttlMs + 1_000 + MARGIN_MS);
    });

    it('closed right after its first list (a short-lived process), leaves nothing it registered behind', async () => {
      const key = uniqueServiceKey();
      const registry = await createRegistry(target.address(), { ttlMs });
      const record = {
        service: key.name,
        version: key.version,
        group: key.group,
        host: '127.0.0.1',
        pid: 4_242,
        application: 'short-lived',
        startTime: Date.now(),
      };
      const registering = registry.registerConsumer(record).catch(() => {});
      await registry.subscribe(key, () => {}); // the first list: the process is done, it closes now
      const statusAtClose = registry.status;
      await registry.close();
      await registering;
      const path = `/callisto/${servicePathSegment(key)}/consumers/127.0.0.1:4242`;
      expect(await readEntry(target.address(), path), `closed while ${statusAtClose}`).toBeUndefined();
    });

    it('leaves no socket, timer or watcher behind after close', async () => {
      const key = uniqueServiceKey();
      const before = countResources();
      const provider = await createRegistry(target.address(), { ttlMs });
      const consumer = await createRegistry(target.address(), { ttlMs });
      await provider.register(providerRecord(key, 20_006));
      const f = await follow(consumer, key);
      await waitFor(() => f.has('127.0.0.1:20006'), 5_000);
      await Promise.all([provider.close(), consumer.close(), consumer.close()]);
      await waitFor(() => leakedSince(before).length === 0, 5_000, {
        message: `still open: ${leakedSince(before).join(', ')}`,
      }).catch((error: Error) => {
        throw new Error(`${error.message}; still open: ${leakedSince(before).join(', ')}`);
      });
    });

    describe.skipIf(!target.privateServer)('outages (private server)', () => {
      const privateServer = async (): Promise<TestServer> => {
        const server = await target.privateServer!();
        later(() => server.close());
        return server;
      };

      for (const wipeData of [false, true]) {
        it(`re-registers and resynchronises after a server restart${wipeData ? ' with data loss' : ''}`, async () => {
          const server = await privateServer();
          const key = uniqueServiceKey();
          const [p11, p12, p13, p14] = [20_011, 20_012, 20_013, 20_014].map((port) =>
            providerRecord(key, port),
          );
          const provider = await open(server.url);
          const consumer = await open(server.url);
          await provider.register(p11!);
          await provider.register(p14!);
          const f = await follow(consumer, key);
          await waitFor(() => f.has('127.0.0.1:20011', '127.0.0.1:20014'), 5_000);
          await waitFor(() => consumer.status === 'connected' && provider.status === 'connected', 5_000);
          const providerStatus = statusLog(provider);
          const consumerStatus = statusLog(consumer);
          const deliveriesBeforeOutage = f.deliveries.length;

          await server.stop();
          await waitFor(
            () => consumer.status === 'disconnected' && provider.status === 'disconnected',
            10_000,
          );
          // while away: the last known list stays; an unregister returns at once and is applied later;
          // a register waits for the server
          expect(f.has('127.0.0.1:20011', '127.0.0.1:20014')).toBe(true);
          await provider.unregister(p14!);
          let registeredLate = false;
          const lateRegister = provider.register(p13!).then(() => {
            registeredLate = true;
          });
          expect(f.deliveries.length).toBe(deliveriesBeforeOutage);

          await server.restart({ wipeData });
          await waitFor(() => consumer.status === 'connected' && provider.status === 'connected', 15_000);
          await lateRegister;
          expect(registeredLate).toBe(true);
          const now = ['127.0.0.1:20011', '127.0.0.1:20013'];
          // a fresh instance sees what is registered now: registered again (or kept), minus the removal
          const fresh = await follow(await open(server.url), key);
          await waitFor(() => fresh.has(...now), 10_000);
          await waitFor(() => f.has(...now), 10_000);
          await provider.register(p12!);
          await waitFor(() => f.has(...now, '127.0.0.1:20012'), 10_000);
          if (!wipeData && !target.restartMayDropEntries) {
            // the server kept the entry: the consumer never saw the provider disappear
            expect(f.deliveries.every((d) => addressesOf(d.list).includes('127.0.0.1:20011'))).toBe(true);
          }
          // each transition reported once, not per retry
          expect(consumerStatus).toEqual(['disconnected', 'connected']);
          expect(providerStatus).toEqual(['disconnected', 'connected']);
        });
      }

      it('uses the snapshot when the registry is down at consumer start', async () => {
        const server = await privateServer();
        const key = uniqueServiceKey();
        const dir = mkdtempSync(join(tmpdir(), 'callisto-snapshot-'));
        later(() => rmSync(dir, { recursive: true, force: true }));
        const snapshotPath = join(dir, 'service.json');
        // reconnect attempts at most 1 s apart (default 5 s): after the restart the provider and the
        // consumer each wait for their next attempt, on a loaded machine after a slow server start
        const provider = await open(server.url, 1_000);
        await provider.register(providerRecord(key, 20_021));

        const first = await open(server.url);
        const seen: string[][] = [];
        const warm = followRegistryLists({
          key,
          registries: [first],
          snapshotPath,
          onChange: (list) => seen.push(list.map((r) => `${r.host}:${r.port}`)),
        });
        await waitFor(() => warm.providers.length === 1, 5_000);
        await warm.close();
        await first.close();

        await server.stop();
        const cold = await open(server.url, 1_000);
        let directory: RegistryLists | undefined;
        later(() => directory?.close());
        directory = followRegistryLists({
          key,
          registries: [cold],
          snapshotPath,
          startTimeoutMs: 300,
          onChange() {},
        });
        await directory.ready;
        expect(directory.source).toBe('snapshot');
        expect(directory.providers.map((r) => r.port)).toEqual([20_021]);

        await server.restart();
        // the provider registers again after the restart; the directory then follows the registry
        await waitFor(
          () => directory?.source === 'registry' && directory.providers.map((r) => r.port).join() === '20021',
          25_000,
        );
      }, 45_000);

      it('closes cleanly while the server is down, rejecting what was pending', async () => {
        const server = await privateServer();
        await server.stop();
        const before = countResources();
        const registry = await createRegistry(server.url, { ttlMs, maxBackoffMs: 200 });
        const key = uniqueServiceKey();
        const settled = (promise: Promise<unknown>) =>
          promise.then(
            () => 'resolved',
            (error: Error) => error.message,
          );
        const pendingSubscribe = settled(registry.subscribe(key, () => {}));
        const pendingRegister = settled(registry.register(providerRecord(key, 20_031)));
        await registry.close();
        expect(await pendingSubscribe).toMatch(/closed/);
        expect(await pendingRegister).toMatch(/closed/);
        await waitFor(() => leakedSince(before).length === 0, 5_000).catch((error: Error) => {
          throw new Error(`${error.message}; still open: ${leakedSince(before).join(', ')}`);
        });
      });
    });
  });
}
