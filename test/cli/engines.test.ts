/**
 * The command line on the server-backed registries (the shared etcd, ZooKeeper and Redis of
 * test/setup), each under a root of its own (`?root=/cli-…`) so nothing else on the shared servers is
 * seen: ls, call, bench and doctor against a real provider process, a bad record written with the
 * engine's own client, and the same commands against a server that is not there (exit 3).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  etcdRawStore,
  type RawStore,
  redisRawStore,
  zookeeperRawStore,
} from '../registry/fixtures/raw-store.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import {
  buildCli,
  type CliBuild,
  closedPort,
  expectOneLineError,
  jsonOf,
  type ProviderProcess,
  runCli,
  show,
  startProvider,
} from './support/cli.js';

const ENGINES = [
  { kind: 'etcd', rawStore: async (address: string) => etcdRawStore(address) },
  { kind: 'zookeeper', rawStore: zookeeperRawStore },
  { kind: 'redis', rawStore: redisRawStore },
] as const;

let cli: CliBuild;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);

afterAll(() => cli?.close());

describe.each(ENGINES)('the command line on $kind', ({ kind, rawStore }) => {
  const root = `/cli-${randomUUID().slice(0, 8)}`;
  let registry: string;
  let provider: ProviderProcess;

  beforeAll(async () => {
    registry = `${kind}://${sharedServerAddress(kind)}?root=${root}`;
    provider = await startProvider({ registry, application: `on-${kind}` });
  }, 60_000);

  afterAll(async () => {
    await provider?.stop();
  });

  it('ls lists the service and its provider', async () => {
    const all = await runCli(cli, ['ls', '--registry', registry, '--json']);
    expect(all.code, show(all)).toBe(0);
    expect(jsonOf(all)['services']).toEqual([
      { name: 'cli.UserService', version: '1.0.0', group: '', providers: 1, consumers: 0 },
    ]);
    const one = await runCli(cli, ['ls', 'cli.UserService', '--registry', registry]);
    expect(one.code, show(one)).toBe(0);
    expect(one.stdout).toMatch(
      new RegExp(`${provider.address}\\s+100\\s+warming\\s.*on-${kind}\\s+${provider.pid}\\n`),
    );
  });

  it('call makes a real call; an unknown service is NoProvider, exit 1', async () => {
    const result = await runCli(cli, ['call', 'cli.UserService.getUser', '3', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id: 3,
      joinedAt: { $t: 'D', v: Date.parse('2024-05-01T12:00:00.000Z') },
    });
    expectOneLineError(
      await runCli(cli, ['call', 'cli.Nope.x', '--registry', registry]),
      1,
      /NoProvider: .*\((connected|connecting)\): nothing registered for cli\.Nope/,
    );
    // a finished call leaves no consumer entry behind, even one that ended before its registry said
    // "connected" (etcd: the lease is revoked at close all the same)
    const listed = await runCli(cli, ['ls', '--registry', registry, '--json']);
    expect(jsonOf(listed)['services']).toEqual([
      { name: 'cli.UserService', version: '1.0.0', group: '', providers: 1, consumers: 0 },
    ]);
  });

  it('bench runs through the registry', async () => {
    const result = await runCli(cli, [
      'bench',
      'cli.UserService.getUser',
      '3',
      '--registry',
      registry,
      '--calls',
      '200',
      '--json',
    ]);
    expect(result.code, show(result)).toBe(0);
    expect(jsonOf(result)).toMatchObject({ ok: 200, failed: 0, target: { via: `registry ${registry}` } });
  });

  it('doctor: healthy, then a bad record written with the engine’s own client', async () => {
    const healthy = await runCli(cli, ['doctor', '--registry', registry]);
    expect(healthy.code, show(healthy)).toBe(0);
    expect(healthy.stdout).toMatch(
      new RegExp(`ok {4}${provider.address} answered a heartbeat in [\\d.]+ ms`),
    );

    const address = sharedServerAddress(kind);
    const store: RawStore = await rawStore(address);
    try {
      const key = `${root}/cli.Broken:1.0.0/providers/10.0.0.9:70000`;
      await store.put(key, JSON.stringify({ service: 'cli.Broken', host: '10.0.0.9', port: 70_000 }));
      const result = await runCli(cli, ['doctor', '--registry', registry]);
      expect(result.code, show(result)).toBe(1);
      expect(result.stdout).toContain(
        `  FAIL  bad record, skipped by every consumer: registry ${registry}: skipped provider entry ${store.keyOf(key)}: port 70000 is not an integer from 1 to 65535\n`,
      );
      expect(result.stdout).toContain('1 problem found');
      const ls = await runCli(cli, ['ls', 'cli.Broken', '--registry', registry]);
      expect(ls.code, show(ls)).toBe(0);
      expect(ls.stderr).toMatch(/^warning: registry .*skipped provider entry .*port 70000/);
      expect(ls.stdout).toContain('cli.Broken 1.0.0: 0 providers, 0 consumers');
    } finally {
      await store.close();
    }
  });

  it('a server that is not there: ls, call and doctor exit 3 with one line', async () => {
    const nowhere = `${kind}://127.0.0.1:${await closedPort()}`;
    expectOneLineError(
      await runCli(cli, ['ls', '--registry', nowhere, '--timeout', '1000']),
      3,
      new RegExp(`^error: cannot reach the registry ${nowhere}`),
    );
    expectOneLineError(
      await runCli(cli, ['call', 'cli.UserService.getUser', '1', '--registry', nowhere], {
        env: { CALLISTO_START_TIMEOUT_MS: '1000' },
      }),
      3,
      /^error: NoProvider: .*\((disconnected|connecting)/,
    );
    const doctor = await runCli(cli, ['doctor', '--registry', nowhere, '--timeout', '1000']);
    expect(doctor.code, show(doctor)).toBe(3);
    expect(doctor.stdout).toContain(`FAIL  cannot reach the registry ${nowhere}`);
  });
});
