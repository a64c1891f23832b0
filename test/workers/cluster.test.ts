/**
 * `server.workers`: one provider served by several processes on one port, registered once. A rolling
 * restart (SIGHUP to the primary) under load fails no call; a worker that dies is replaced; SIGTERM to
 * the primary closes the whole cluster gracefully and unregisters it. Real processes, real sockets, the
 * embedded file registry.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callisto, RpcError } from '../../src/index.js';
import { startWindowLoad, summary } from '../chaos/support/load.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { PidDef } from './fixtures/pid-service.js';
import { killAll, startChild } from './fixtures/process.js';

const CLUSTER = new URL('./fixtures/cluster-provider.ts', import.meta.url);
const dirs: string[] = [];

afterEach(async () => {
  await closeAll();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function registryDir(): { address: string; root: string; providers: () => string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-cluster-'));
  dirs.push(dir);
  const root = path.join(dir, 'registry');
  return {
    address: `file://${root}`,
    root,
    providers: () => {
      try {
        return readdirSync(path.join(root, 'callisto', 'test.Pid:1.0.0', 'providers')).filter((name) =>
          name.endsWith('.json'),
        );
      } catch {
        return [];
      }
    },
  };
}

/** Pids answering `pid()` over `calls` calls (new connections land round robin on the workers). */
async function pidsSeen(call: () => Promise<number>, calls: number): Promise<Set<number>> {
  const seen = new Set<number>();
  for (let i = 0; i < calls; i++) seen.add(await call());
  return seen;
}

describe('server.workers', () => {
  it('serves one registered address from several processes and restarts them under load without a failed call', async () => {
    const registry = registryDir();
    const child = await startChild(CLUSTER, { WK_WORKERS: '2', WK_REGISTRY: registry.address });
    const primaryPid = Number(/PRIMARY (\d+)/.exec(child.output())![1]);
    expect(registry.providers()).toEqual([`${child.address}.json`]);
    const record = JSON.parse(
      readFileSync(
        path.join(registry.root, 'callisto', 'test.Pid:1.0.0', 'providers', `${child.address}.json`),
        'utf8',
      ),
    );
    expect(record).toMatchObject({ weight: 100, pid: primaryPid, tags: { workers: '2' } });

    // each consumer app has its own connection; the primary hands new connections round robin
    const consumers = await Promise.all(
      [1, 2, 3, 4].map(() =>
        testApp({ registry: registry.address, registryTtlMs: 3_000, consumer: { snapshotDir: '' } }),
      ),
    );
    const refs = consumers.map((app) => app.refer(PidDef, { timeoutMs: 10_000, retries: 0 }));
    const before = await pidsSeen(
      (() => {
        let i = 0;
        return () => refs[i++ % refs.length]!.pid();
      })(),
      8,
    );
    expect(before.has(primaryPid)).toBe(false);
    expect(before.size).toBe(2);

    const load = startWindowLoad({
      window: 32,
      call: (id) => refs[id % refs.length]!.work(id),
      method: () => 'work',
    });
    try {
      await load.settle(500, 30_000);
      child.process.kill('SIGHUP');
      await waitFor(() => child.output().includes('worker processes restarted'), 60_000, {
        message: `the rolling restart to end:\n${child.output()}`,
      });
      await load.settle(500, 30_000);
    } finally {
      const report = await load.stop();
      console.log(summary('workers rolling restart', report));
      expect(report.failures.slice(0, 5)).toEqual([]);
      expect(report.ok).toBe(report.issued);
    }
    const after = await pidsSeen(
      (() => {
        let i = 0;
        return () => refs[i++ % refs.length]!.pid();
      })(),
      8,
    );
    expect([...after].filter((pid) => before.has(pid))).toEqual([]);
    expect(registry.providers()).toEqual([`${child.address}.json`]);

    child.process.kill('SIGTERM');
    expect(await child.exited()).toEqual({ code: 0, signal: null });
    expect(registry.providers()).toEqual([]);
  }, 120_000);

  it('replaces a worker that dies; the cluster keeps serving', async () => {
    const child = await startChild(CLUSTER, { WK_WORKERS: '2' });
    const consumers = await Promise.all([1, 2, 3, 4].map(() => testApp()));
    const refs = consumers.map((app) => app.refer(PidDef, { url: child.address, timeoutMs: 10_000 }));
    const pids = new Set(await Promise.all(refs.map((ref) => ref.pid())));
    expect(pids.size).toBe(2);
    const victim = [...pids][0]!;
    process.kill(victim, 'SIGKILL');
    await waitFor(() => /worker \d+ \(pid \d+\) died/.test(child.output()), 20_000, {
      message: 'the primary notices',
    });
    // fresh consumers (new connections) reach the replacement once it serves, never the dead one
    const seen = new Set<number>();
    await waitFor(
      async () => {
        const fresh = await testApp();
        seen.add(await fresh.refer(PidDef, { url: child.address, timeoutMs: 10_000 }).pid());
        await fresh.close();
        return [...seen].some((pid) => !pids.has(pid));
      },
      30_000,
      { message: 'a replacement worker serves' },
    );
    expect(seen.has(victim)).toBe(false);
    // the consumers that were connected to the survivor were never disturbed; the others reconnect
    expect(await Promise.all(refs.map((ref) => ref.pid()))).toHaveLength(4);
    child.process.kill('SIGTERM');
    expect(await child.exited()).toEqual({ code: 0, signal: null });
  }, 90_000);

  // node:cluster itself ends a worker whose primary is gone (its IPC channel closes): no orphan keeps
  // serving an address nobody supervises. This guards that behaviour; Callisto adds nothing to it.
  it('its workers leave when the primary is killed', async () => {
    const child = await startChild(CLUSTER, { WK_WORKERS: '2' });
    const consumers = await Promise.all([1, 2, 3, 4].map(() => testApp()));
    const pids = new Set(
      await Promise.all(consumers.map((app) => app.refer(PidDef, { url: child.address }).pid())),
    );
    expect(pids.size).toBe(2);
    child.process.kill('SIGKILL');
    await child.exited();
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => [...pids].every((pid) => !alive(pid)), 20_000, {
      message: 'the orphaned workers exit',
    });
  }, 60_000);

  it('serves TLS from every worker on the one shared port (server.workers with server.tls)', async () => {
    const pki: Pki = makePki();
    try {
      const registry = registryDir();
      const child = await startChild(CLUSTER, {
        WK_WORKERS: '2',
        WK_REGISTRY: registry.address,
        WK_TLS_KEY: pki.server.key,
        WK_TLS_CERT: pki.server.cert,
      });
      expect(child.address).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
      const [file] = registry.providers();
      const record = JSON.parse(
        readFileSync(path.join(registry.root, 'callisto', 'test.Pid:1.0.0', 'providers', file!), 'utf8'),
      );
      expect(record).toMatchObject({ tls: true, transport: 'tls', tags: { workers: '2' } });
      // each consumer has its own TLS connection; the primary hands them round robin to the workers
      const consumers = await Promise.all(
        [1, 2, 3, 4].map(() =>
          testApp({ registry: registry.address, consumer: { snapshotDir: '', tls: { ca: pki.ca } } }),
        ),
      );
      const pids = new Set(
        await Promise.all(consumers.map((app) => app.refer(PidDef, { timeoutMs: 10_000 }).pid())),
      );
      expect(pids.size).toBe(2);
      // and nothing answers in plaintext there
      const plain = await testApp();
      const refused = await plain
        .refer(PidDef, { url: child.address.replace('tls://', ''), timeoutMs: 3_000, retries: 0 })
        .pid()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(RpcError.is(refused)).toBe(true);
      child.process.kill('SIGTERM');
      expect(await child.exited()).toEqual({ code: 0, signal: null });
    } finally {
      pki.remove();
    }
  }, 90_000);

  it('refuses server.workers with a transport processes cannot share, at callisto()', async () => {
    const error = await callisto({
      logLevel: 'silent',
      load: { configFile: false, env: false },
      server: { workers: 2, transport: 'memory' },
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/server\.workers.*only tcp, and tls over it, can be shared/);
    expect(RpcError.is(error)).toBe(false);
  });

  it('names server.workers and what it takes when its value is wrong', async () => {
    for (const workers of [0, 1.5, 'all']) {
      await expect(
        callisto({
          logLevel: 'silent',
          load: { configFile: false, env: false },
          server: { workers: workers as number },
        }),
      ).rejects.toThrow(/server\.workers/);
    }
  });
});
