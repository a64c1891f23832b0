/**
 * What a consumer does when a provider leaves, over real sockets and real registries:
 *
 * - a graceful stop (unregister, "going away", drain): calls fail over at once or, with no provider
 *   left, fail NoProvider at once; no Network errors, no warning, no empty-list hold, and no reconnect
 *   attempt to the provider that said goodbye;
 * - a crash: one warning per provider per outage, the failures after it counted and told when the
 *   provider is back or leaves the list;
 * - empty-list protection holds a sudden empty list only while connections are healthy: an address the
 *   consumer never connected to is not healthy.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, RpcError } from '../../src/index.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { logLines } from './fixtures/log-lines.js';
import { fileRawStore } from './fixtures/raw-store.js';
import { providerRecord } from './fixtures/records.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await closeAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-leaving-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function provider(
  name: string,
  registry: string | string[],
  port = 0,
  impl = new FlakyImpl(name),
): Promise<CallistoApp> {
  const app = await testApp({ application: name, registry, registryTtlMs: 3_000, server: { port } });
  app.provide(FlakyDef, impl);
  return app.start();
}

/**
 * A provider app listed in the file registry at `dir` by a hand-written record, not by its own registry
 * (which would write its entry again when a test removes it): `unlist()` is what a TTL expiry or a
 * registry glitch does.
 */
async function listedProvider(name: string, dir: string, port = 0, impl = new FlakyImpl(name)) {
  const app = await provider(name, [], port, impl);
  const store = fileRawStore(dir);
  cleanups.push(() => store.close());
  const path = `/callisto/${servicePathSegment(FlakyDef)}/providers/${app.address}`;
  const list = (pid: number) =>
    store.put(path, JSON.stringify(providerRecord(FlakyDef, app.port!, { pid, startTime: Date.now() })));
  await list(process.pid);
  return {
    app,
    address: app.address!,
    unlist: () => unlinkSync(store.keyOf(path)),
    /** Rewrites the entry as a new provider process at the same address would. */
    relist: (pid: number) => list(pid),
  };
}

/** A consumer app on `registry` whose log lines (all levels) the test reads. */
async function watchedConsumer(registry: string, consumer: Record<string, unknown> = {}) {
  const log = logLines();
  const app = await testApp({
    registry,
    registryTtlMs: 3_000,
    logger: log.logger,
    logLevel: 'info',
    consumer: { snapshotDir: '', ...consumer },
  });
  return { app, log };
}

/** Calls until two different providers have answered (`<name>:<key>`), so both have a connection. */
async function reachBoth(call: () => Promise<string>): Promise<void> {
  const seen = new Set<string>();
  await waitFor(async () => {
    seen.add((await call()).split(':')[0]!);
    return seen.size === 2;
  });
}

/** Calls `call` back to back until stopped; counts outcomes by code and keeps the errors. */
function callLoop(call: () => Promise<unknown>) {
  const codes: Record<string, number> = {};
  const errors: RpcError[] = [];
  let running = true;
  let firstNoProviderAt = 0;
  const done = (async () => {
    while (running) {
      try {
        await call();
        codes['ok'] = (codes['ok'] ?? 0) + 1;
      } catch (error) {
        const failure = RpcError.from(error);
        codes[failure.code] = (codes[failure.code] ?? 0) + 1;
        if (errors.length < 20) errors.push(failure);
        if (failure.code === 'NoProvider' && firstNoProviderAt === 0) firstNoProviderAt = Date.now();
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    codes,
    errors,
    count: (code: string) => codes[code] ?? 0,
    firstNoProviderAt: () => firstNoProviderAt,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** A plain TCP server on `port` that counts the connections made to it. */
async function sentinel(port: number): Promise<{ connections: () => number }> {
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { connections: () => count };
}

/** Resolves after `ms` while calls keep going: an observation window for something that must not happen. */
const observe = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `callisto:client:connection` messages about `address`. */
function connectionEvents(address: () => string): Array<{ event: string; reason?: string }> {
  const seen: Array<{ event: string; reason?: string }> = [];
  const listener = (message: unknown) => {
    const m = message as { address: string; event: string; reason?: string };
    if (m.address === address()) seen.push({ event: m.event, reason: m.reason });
  };
  subscribe('callisto:client:connection', listener);
  cleanups.push(() => {
    unsubscribe('callisto:client:connection', listener);
  });
  return seen;
}

describe('a provider that stops gracefully', () => {
  for (const kind of ['file', 'etcd'] as const) {
    it(`is gone at once for its last consumer (${kind}): NoProvider, no Network error, no warning`, async () => {
      const registry =
        kind === 'file'
          ? `file://${tempDir()}`
          : `etcd://${sharedServerAddress('etcd')}?root=/leaving-${process.pid}`;
      const leaving = await provider('leaving', registry);
      const { app: consumer, log } = await watchedConsumer(registry);
      const ref = consumer.refer(FlakyDef);
      expect(await ref.write('first')).toBe('leaving:first');
      const calls = callLoop(() => ref.write('x'));
      await waitFor(() => calls.count('ok') >= 50);
      await leaving.close();
      const closedAt = Date.now();
      await waitFor(() => calls.firstNoProviderAt() > 0, 10_000);
      await waitFor(() => calls.count('NoProvider') >= 50);
      await calls.stop();

      // the default hold of a sudden empty list is 5 s; a provider that said goodbye is not held
      expect(calls.firstNoProviderAt() - closedAt).toBeLessThan(2_500);
      expect(
        Object.keys(calls.codes).filter((code) => !['ok', 'NoProvider', 'Shutdown'].includes(code)),
      ).toEqual([]);
      expect(calls.errors.every((error) => error.neverSent)).toBe(true);
      expect(log.problems()).toEqual([]);
    });
  }

  it('lets calls fail over at once while it drains, and is never reconnected to', async () => {
    const dir = tempDir();
    const registry = `file://${dir}`;
    const staying = await provider('staying', registry);
    // Listed by hand, so its entry stays while it stops (a registry slower than its goodbye): what the
    // consumer does on the goodbye alone is what is seen.
    const leavingImpl = new FlakyImpl('leaving');
    const leaving = await listedProvider('leaving', dir, 0, leavingImpl);
    const { app: consumer, log } = await watchedConsumer(registry, {
      loadbalance: 'roundrobin',
      warmupMs: 0,
    });
    const ref = consumer.refer(FlakyDef);
    await reachBoth(() => ref.write('warm'));
    const calls = callLoop(() => ref.write('x'));
    await waitFor(() => calls.count('ok') >= 100);
    leavingImpl.mode = 'slow'; // calls in flight on it while it drains (300 ms each)
    await waitFor(() => appInternals(leaving.app).provider.server!.active > 0);
    await leaving.app.close();
    const watch = await sentinel(leaving.app.port!);
    const okBefore = calls.count('ok');
    await observe(1_500); // longer than a reconnect backoff (200-400 ms after a first loss)
    await waitFor(() => calls.count('ok') >= okBefore + 100);
    await calls.stop();

    expect(calls.codes).toEqual({ ok: calls.count('ok') }); // not one failed call, whatever the method
    expect(watch.connections()).toBe(0);
    expect(appInternals(consumer).consumer.pool.isAvailable(leaving.address)).toBe(false); // still listed
    expect(log.problems()).toEqual([]);
    await staying.close();
  });

  it('is not reconnected to even when no registry removes it (direct addresses)', async () => {
    const staying = await provider('staying', []);
    const leaving = await provider('leaving', []);
    const leavingAddress = leaving.address!;
    const log = logLines();
    const consumer = await testApp({ logger: log.logger, logLevel: 'info' });
    const ref = consumer.refer(FlakyDef, {
      url: [staying.address!, leavingAddress],
      loadbalance: 'roundrobin',
      warmupMs: 0,
    });
    await reachBoth(() => ref.write('warm'));
    const calls = callLoop(() => ref.write('x'));
    await waitFor(() => calls.count('ok') >= 100);
    await leaving.close();
    await waitFor(
      () =>
        !appInternals(consumer)
          .consumer.pool.connections()
          .some((c) => c.address === leavingAddress),
    );
    const watch = await sentinel(leaving.port!);
    const okBefore = calls.count('ok');
    await observe(1_500);
    await waitFor(() => calls.count('ok') >= okBefore + 100);
    await calls.stop();

    expect(calls.codes).toEqual({ ok: calls.count('ok') });
    expect(watch.connections()).toBe(0);
    expect(appInternals(consumer).consumer.pool.isAvailable(leavingAddress)).toBe(false);
    expect(log.problems()).toEqual([]);
  });
});

describe('a provider that comes back on the same address', () => {
  it('is called again as soon as a registry announces the new process, even after it said goodbye', async () => {
    const dir = tempDir();
    const registry = `file://${dir}`;
    const staying = await provider('staying', registry);
    const first = await listedProvider('first', dir);
    const port = first.app.port!;
    const { app: consumer } = await watchedConsumer(registry, { loadbalance: 'roundrobin', warmupMs: 0 });
    const ref = consumer.refer(FlakyDef);
    await reachBoth(() => ref.read('warm'));
    // the entry stays listed (the consumer never sees it go): only the process changes
    await first.app.close();
    const address = first.address;
    await waitFor(
      () =>
        !appInternals(consumer)
          .consumer.pool.connections()
          .some((c) => c.address === address),
    );
    const second = await provider('second', [], port);
    await first.relist(process.pid + 1);
    await waitFor(async () => (await ref.read('again')) === 'second:again', 10_000, {
      message: 'calls reach the provider announced anew',
    });
    await second.close();
    await staying.close();
  });
});

describe('a provider that crashes', () => {
  it('is logged once per outage; the failures meanwhile are counted and told when it is back', async () => {
    const staying = await provider('staying', []);
    const crashing = await provider('crashing', []);
    const port = crashing.port!;
    const address = crashing.address!;
    const log = logLines();
    const events = connectionEvents(() => address);
    const consumer = await testApp({ logger: log.logger, logLevel: 'info' });
    const ref = consumer.refer(FlakyDef, { url: [staying.address!, address], loadbalance: 'roundrobin' });
    await reachBoth(() => ref.read('warm'));
    const calls = callLoop(() => ref.read('x'));
    crashing.destroy();
    // the pool keeps trying in the background: wait for several failed attempts
    await waitFor(() => events.filter((e) => e.event === 'closed').length >= 4, 15_000);
    const back = await provider('crashing-again', [], port);
    await waitFor(() => log.matching(/connected to .* again/).length === 1, 15_000);
    await waitFor(async () => (await ref.read('y')) === 'crashing-again:y', 10_000);
    await calls.stop();
    const failures = events.filter((e) => e.event === 'closed').length;

    const lost = log.matching(new RegExp(`lost connection to ${address}`));
    expect(lost).toHaveLength(1);
    expect(lost[0]!.level).toBe('warn');
    const recovered = log.matching(new RegExp(`connected to ${address} again after \\d+ ms`));
    expect(recovered[0]!.message).toContain(`; ${failures - 1} more failures meanwhile, not logged`);
    expect(log.problems()).toHaveLength(1);
    expect(calls.count('ok')).toBeGreaterThan(0);
    await back.close();
  });

  it('is tried at most once per 200 ms by calls with nowhere else to go, not once per call', async () => {
    const crashing = await provider('crashing', []);
    const address = crashing.address!;
    const events = connectionEvents(() => address);
    const log = logLines();
    const consumer = await testApp({ logger: log.logger, logLevel: 'info' });
    const ref = consumer.refer(FlakyDef, { url: [address], retries: 0 });
    expect(await ref.read('warm')).toBe('crashing:warm');
    crashing.destroy();
    await waitFor(() => events.some((e) => e.event === 'closed'));
    const calls = callLoop(() => ref.read('x'));
    const began = Date.now();
    await waitFor(() => calls.count('Network') >= 1_000, 20_000);
    await calls.stop();
    const elapsed = Date.now() - began;
    const attempts = events.filter((e) => e.event === 'closed').length - 1;

    // one on-demand attempt per reconnectBaseMs (200 ms), plus the background reconnects
    expect(attempts).toBeLessThanOrEqual(2 + Math.ceil((2 * elapsed) / 200));
    expect(calls.errors.every((error) => error.code === 'Network' && error.neverSent)).toBe(true);
    expect(log.problems()).toHaveLength(1);
  });

  it('tells the count of failures not logged when it leaves the provider list', async () => {
    const dir = tempDir();
    const registry = `file://${dir}`;
    const staying = await provider('staying', registry);
    const crashing = await listedProvider('crashing', dir);
    const address = crashing.address;
    const events = connectionEvents(() => address);
    const { app: consumer, log } = await watchedConsumer(registry, { loadbalance: 'roundrobin' });
    const ref = consumer.refer(FlakyDef);
    await reachBoth(() => ref.read('warm'));
    crashing.app.destroy(); // its entry stays until the TTL
    await waitFor(() => events.filter((e) => e.event === 'closed').length >= 3, 15_000);
    crashing.unlist(); // what the TTL does a little later
    await waitFor(() => log.matching(/left the provider list/).length === 1, 10_000);
    const failures = events.filter((e) => e.event === 'closed').length;

    expect(log.matching(new RegExp(`lost connection to ${address}`))).toHaveLength(1);
    expect(log.matching(/left the provider list/)[0]!.message).toMatch(
      new RegExp(
        `^${address} left the provider list, unreachable for \\d+ ms; ${failures - 1} more failures`,
      ),
    );
    expect(await ref.read('z')).toBe('staying:z');
    await staying.close();
  });
});

describe('empty-list protection', () => {
  it('does not hold an empty list for providers the consumer never connected to', async () => {
    const dir = tempDir();
    const registry = `file://${dir}`;
    const { app: consumer, log } = await watchedConsumer(registry);
    const ref = consumer.refer(FlakyDef);
    // the first call creates the consumer's view of the service; there is no provider yet
    await expect(ref.read('a')).rejects.toMatchObject({ code: 'NoProvider' });
    const listed = await listedProvider('listed', dir);
    const directory = () => [...appInternals(consumer).consumer.directories().values()][0]!;
    await waitFor(() => directory().list().length === 1, 10_000);
    expect(appInternals(consumer).consumer.pool.size).toBe(0); // never called: no connection
    // the registry entry goes (the provider process lives on); nothing shows it is still there
    listed.unlist();
    const removedAt = Date.now();
    await waitFor(() => directory().list().length === 0, 10_000);
    expect(Date.now() - removedAt).toBeLessThan(2_500); // not held for the 5 s confirm delay
    expect(log.problems()).toEqual([]);
  });

  it('still holds an empty list while a connection to the provider is healthy', async () => {
    const dir = tempDir();
    const registry = `file://${dir}`;
    const listed = await listedProvider('listed', dir);
    const { app: consumer } = await watchedConsumer(registry);
    const ref = consumer.refer(FlakyDef);
    expect(await ref.read('a')).toBe('listed:a');
    // a registry glitch: the entry vanishes while the provider serves on
    listed.unlist();
    const directory = [...appInternals(consumer).consumer.directories().values()][0]!;
    for (let i = 0; i < 20; i++) expect(await ref.read(`b${i}`)).toBe(`listed:b${i}`);
    await observe(1_000); // a file registry notices a removal within 500 ms
    expect(directory.list().map((e) => e.address)).toEqual([listed.address]);
    expect(await ref.read('c')).toBe('listed:c');
  });
});
