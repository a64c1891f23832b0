/**
 * `callisto ls`, the built binary, against real provider processes on the file registry: the services
 * with versions, groups and counts; one service's providers (address, weight, state, start time,
 * application) and consumers; bad input and an unreachable registry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCli,
  type CliBuild,
  closedPort,
  expectOneLineError,
  hasAnsi,
  jsonOf,
  type ProviderProcess,
  runCli,
  show,
  startProvider,
} from './support/cli.js';
import { consumerEntry, providerEntry, writeEntry } from './support/file-records.js';

let cli: CliBuild;
let users: ProviderProcess;
let billing: ProviderProcess;
let dir: string;
let registry: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-ls-'));
  registry = `file://${dir}`;
  [cli, users, billing] = await Promise.all([
    buildCli(),
    startProvider({ registry, application: 'users' }),
    startProvider({ registry, application: 'billing', version: '2.0.0', group: 'blue', weight: 7 }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([users?.stop(), billing?.stop()]);
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ls = (args: string[]) => runCli(cli, ['ls', ...args]);

describe('callisto ls', () => {
  it('--load asks each provider for its load: calls in flight / adaptive limit, event-loop delay', async () => {
    const result = await ls(['cli.UserService', '--registry', registry, '--load']);
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout).toMatch(/IN FLIGHT\/LIMIT\s+LOOP DELAY\s+QUEUED/);
    const row = result.stdout.split('\n').find((line) => line.trim().startsWith(users.address))!;
    // nothing learnt yet: the default start, 10 000
    expect(row).toMatch(/\b\d+\/10000\s+\d+ ms\s+0\s*$/);
    const json = jsonOf(await ls(['cli.UserService', '--registry', registry, '--load', '--json'])) as {
      keys: Array<{ providers: Array<{ address: string; load: unknown }> }>;
    };
    const provider = json.keys.flatMap((key) => key.providers).find((p) => p.address === users.address);
    expect(provider?.load).toMatchObject({ load: { limit: 10000, queued: 0, overloaded: false } });
  });

  it('lists the services with versions, groups, provider and consumer counts', async () => {
    writeEntry(dir, 'cli.UserService:1.0.0', 'consumers', 'web-1:777', consumerEntry('cli.UserService'));
    const result = await ls(['--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).toBe('');
    expect(hasAnsi(result.stdout)).toBe(false);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`file://${dir}: 1 service, 2 providers, 1 consumer`);
    expect(lines[1]).toMatch(/^SERVICE\s+VERSION\s+GROUP\s+PROVIDERS\s+CONSUMERS$/);
    expect(lines.slice(2).map((line) => line.split(/\s+/))).toEqual([
      ['cli.UserService', '1.0.0', '-', '1', '1'],
      ['cli.UserService', '2.0.0', 'blue', '1', '0'],
    ]);
    const json = jsonOf(await ls(['--registry', registry, '--json']));
    expect(json).toEqual({
      registry: `file://${dir}`,
      services: [
        { name: 'cli.UserService', version: '1.0.0', group: '', providers: 1, consumers: 1 },
        { name: 'cli.UserService', version: '2.0.0', group: 'blue', providers: 1, consumers: 0 },
      ],
    });
  });

  it("lists one service's providers (address, weight, state, start time, application) and consumers", async () => {
    writeEntry(dir, 'cli.UserService:1.0.0', 'consumers', 'web-1:777', consumerEntry('cli.UserService'));
    const result = await ls(['cli.UserService', '--registry', registry]);
    expect(result.code, show(result)).toBe(0);
    const text = result.stdout;
    expect(text).toContain('cli.UserService 1.0.0: 1 provider, 1 consumer');
    expect(text).toContain('cli.UserService 2.0.0 group blue: 1 provider, 0 consumers');
    expect(text).toMatch(/ADDRESS\s+WEIGHT\s+STATE\s+STARTED\s+UP\s+APPLICATION\s+PID/);
    const row = (address: string) => text.split('\n').find((line) => line.trim().startsWith(address))!;
    expect(row(users.address).trim().split(/\s+/)).toEqual([
      users.address,
      '100',
      'warming', // younger than consumer.warmupMs (10 min)
      expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
      expect.stringMatching(/^\d\d:\d\d:\d\dZ$/),
      expect.stringMatching(/^\d+$/),
      expect.stringMatching(/^(s|ms|min)$/),
      'users',
      String(users.pid),
    ]);
    expect(row(billing.address)).toMatch(
      new RegExp(`^\\s+${billing.address}\\s+7\\s+warming\\s.*billing\\s+${billing.pid}$`),
    );
    expect(text).toMatch(/HOST\s+PID\s+APPLICATION\s+STARTED\n\s+web-1\s+777\s+web\s+2024-05-01 00:00:00Z/);

    const json = jsonOf(
      await ls(['cli.UserService', '--registry', registry, '--version', '2.0.0', '--json']),
    );
    expect(json).toMatchObject({ registry: `file://${dir}`, service: 'cli.UserService' });
    const keys = json['keys'] as Array<Record<string, unknown>>;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({
      version: '2.0.0',
      group: 'blue',
      providers: [
        {
          address: billing.address,
          state: 'warming',
          weight: 7,
          application: 'billing',
          pid: billing.pid,
          service: 'cli.UserService',
          startTime: expect.any(Number),
        },
      ],
      consumers: [],
    });
    const grouped = jsonOf(await ls(['cli.UserService', '--registry', registry, '--group', '', '--json']));
    expect((grouped['keys'] as Array<{ version: string }>).map((k) => k.version)).toEqual(['1.0.0']);
  });

  it('a provider older than the warm-up is serving', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'callisto-cli-ls-old-'));
    try {
      writeEntry(empty, 'cli.Old:1.0.0', 'providers', '127.0.0.1:20001', providerEntry('cli.Old', 20_001));
      const result = await ls(['cli.Old', '--registry', `file://${empty}`, '--json']);
      const keys = jsonOf(result)['keys'] as Array<{ providers: Array<{ state: string }> }>;
      expect(keys[0]!.providers[0]!.state).toBe('serving');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('an unknown service: one line naming the registry and what is close, exit 1', async () => {
    expectOneLineError(
      await ls(['cli.UserServic', '--registry', registry]),
      1,
      new RegExp(
        `^error: nothing registered for cli\\.UserServic at file://${dir}; did you mean cli\\.UserService\\?$`,
      ),
    );
    expectOneLineError(
      await ls(['UserService', '--registry', registry]),
      1,
      /nothing registered for UserService .*did you mean cli\.UserService\?/,
    );
    expectOneLineError(
      await ls(['cli.UserService', '--version', '3.0.0', '--registry', registry]),
      1,
      /^error: cli\.UserService has no version 3\.0\.0 at .* \(registered: 1\.0\.0, 2\.0\.0 \(group blue\)\)$/,
    );
  });

  it('an empty registry holds no service; exit 0', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'callisto-cli-ls-empty-'));
    try {
      const result = await ls(['--registry', `file://${empty}`]);
      expect(result.code, show(result)).toBe(0);
      expect(result.stdout).toBe(`file://${empty} holds no service\n`);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('reports a bad record as a warning and lists the rest', async () => {
    const other = mkdtempSync(path.join(tmpdir(), 'callisto-cli-ls-bad-'));
    try {
      const bad = writeEntry(other, 'cli.Odd:1.0.0', 'providers', 'bad', providerEntry('cli.Odd', 70_000));
      writeEntry(other, 'cli.Odd:1.0.0', 'providers', '127.0.0.1:20002', providerEntry('cli.Odd', 20_002));
      const result = await ls(['cli.Odd', '--registry', `file://${other}`]);
      expect(result.code, show(result)).toBe(0);
      expect(result.stderr).toBe(
        `warning: registry file://${other}: skipped provider entry ${bad}: port 70000 is not an integer from 1 to 65535\n`,
      );
      expect(result.stdout).toContain('cli.Odd 1.0.0: 1 provider, 0 consumers');
      expect(result.stdout).toMatch(/127\.0\.0\.1:20002\s+100\s+serving/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('an unreachable registry: one line, exit 3, within --timeout', async () => {
    const port = await closedPort();
    const result = await ls(['--registry', `redis://127.0.0.1:${port}`, '--timeout', '1000']);
    expectOneLineError(
      result,
      3,
      new RegExp(`^error: cannot reach the registry redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
    expect(result.ms).toBeLessThan(10_000);
  });

  it('command-line mistakes: one line, exit 2', async () => {
    expectOneLineError(await ls([]), 2, /which registry\? give --registry <address>/);
    expectOneLineError(await ls(['--registry', 'file']), 2, /invalid --registry = "file"/);
    expectOneLineError(await ls(['--registry', registry, '--timeout', '-1']), 2, /--timeout/);
  });
});
