/**
 * `callisto disable|enable|weight|mock`, the built binary, on every registry kind (file, and the shared
 * etcd, ZooKeeper and Redis under a root of their own) against a real provider process: the override
 * record written where docs/governance.md says (read back with the engine's own client), its effect on
 * another process (`callisto call` answers NoProvider while the service's only provider is disabled),
 * and bad input (exit 2), an unregistered provider (exit 1), an unreachable registry (exit 3).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
} from '../cli/support/cli.js';
import { readEntry } from '../registry/fixtures/read-entry.js';
import { sharedServerAddress } from '../setup/shared-servers.js';

let cli: CliBuild;
const dir = mkdtempSync(path.join(tmpdir(), 'callisto-cli-control-'));

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);

afterAll(() => {
  cli?.close();
  rmSync(dir, { recursive: true, force: true });
});

const KINDS = ['file', 'etcd', 'zookeeper', 'redis'] as const;

describe.each(KINDS)('runtime control from the command line on %s', (kind) => {
  const root = `/gov-cli-${randomUUID().slice(0, 8)}`;
  let registry: string;
  let provider: ProviderProcess;
  const configPath = `${root}/cli.UserService:1.0.0/config`;

  beforeAll(async () => {
    registry =
      kind === 'file' ? `file://${dir}?root=${root}` : `${kind}://${sharedServerAddress(kind)}?root=${root}`;
    provider = await startProvider({ registry, application: `control-${kind}` });
  }, 60_000);

  afterAll(async () => {
    await provider?.stop();
  });

  const cliRun = (args: string[]) => runCli(cli, [...args, '--registry', registry]);
  const stored = async () => {
    const text = await readEntry(kind === 'file' ? `file://${dir}` : registry, configPath);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };

  it('disable --provider stops another process calling it (NoProvider); enable restores it', async () => {
    const disabled = await cliRun(['disable', 'cli.UserService', '--provider', provider.address, '--json']);
    expect(disabled.code, show(disabled)).toBe(0);
    expect(jsonOf(disabled)).toMatchObject({
      service: 'cli.UserService',
      version: '1.0.0',
      action: 'disable',
      overrides: { disabled: false, disabledProviders: [provider.address] },
    });
    expect(await stored()).toMatchObject({ disabledProviders: [provider.address] });
    expectOneLineError(
      await cliRun(['call', 'cli.UserService.getUser', '3']),
      1,
      /NoProvider: .*every provider is disabled by an operator/,
    );
    const enabled = await cliRun(['enable', 'cli.UserService', '--provider', provider.address]);
    expect(enabled.code, show(enabled)).toBe(0);
    expect(enabled.stdout).toMatch(
      /^enabled provider \S+ \(cli\.UserService 1\.0\.0 at .*\)\noverrides now: none\n$/,
    );
    expect(await stored()).toBeUndefined();
    const call = await cliRun(['call', 'cli.UserService.getUser', '3']);
    expect(call.code, show(call)).toBe(0);
  });

  it('disable and enable a whole service', async () => {
    const disabled = await cliRun(['disable', 'cli.UserService']);
    expect(disabled.code, show(disabled)).toBe(0);
    expect(disabled.stdout).toMatch(/overrides now: service disabled\n$/);
    expectOneLineError(
      await cliRun(['call', 'cli.UserService.getUser', '3']),
      1,
      /NoProvider: .*the service is disabled by an operator/,
    );
    expect((await cliRun(['enable', 'cli.UserService'])).code).toBe(0);
    expect((await cliRun(['call', 'cli.UserService.getUser', '3'])).code).toBe(0);
  });

  it('weight sets a provider weight; refuses a bad weight (2) and an unregistered provider (1)', async () => {
    const result = await cliRun(['weight', 'cli.UserService', '--provider', provider.address, '7', '--json']);
    expect(result.code, show(result)).toBe(0);
    expect(jsonOf(result)['overrides']).toMatchObject({ weights: { [provider.address]: 7 } });
    expect(await stored()).toMatchObject({ weights: { [provider.address]: 7 } });
    expectOneLineError(
      await cliRun(['weight', 'cli.UserService', '--provider', provider.address, '-3']),
      2,
      /weight|-3/,
    );
    expectOneLineError(
      await cliRun(['weight', 'cli.UserService', '--provider', '127.0.0.1:1', '5']),
      1,
      /no provider 127\.0\.0\.1:1 is registered for cli\.UserService .*registered: /,
    );
    expectOneLineError(
      await cliRun(['disable', 'cli.UserService', '--provider', 'nonsense']),
      2,
      /expected host:port/,
    );
    // back to the record's weight: a clear through the API is not a command; set it to the default
    expect((await cliRun(['weight', 'cli.UserService', '--provider', provider.address, '100'])).code).toBe(0);
  });

  it('mock switches a method fail and off, refuses force without a mock (1); a bad mode or target is a usage error', async () => {
    // no consumer of cli.UserService has a mock for getUser: forcing it would leave callers nothing
    expectOneLineError(
      await cliRun(['mock', 'cli.UserService.getUser', 'force']),
      1,
      /cannot switch the mock: cannot force the mock of cli\.UserService\.getUser .*no consumer has a mock for it/,
    );
    expect((await stored())?.['mocks'] ?? {}).toEqual({});
    const fail = await cliRun(['mock', 'cli.UserService.getUser', 'fail']);
    expect(fail.code, show(fail)).toBe(0);
    expect(fail.stdout).toMatch(
      /^mock of getUser set to fail .*\noverrides now: .*method getUser mock fail\n$/,
    );
    expect(await stored()).toMatchObject({ mocks: { getUser: 'fail' } });
    expect((await cliRun(['mock', 'cli.UserService.getUser', 'off'])).code).toBe(0);
    expect((await stored())?.['mocks'] ?? {}).toEqual({});
    expectOneLineError(
      await cliRun(['mock', 'cli.UserService.getUser', 'sometimes']),
      2,
      /force, fail or off/,
    );
    expectOneLineError(await cliRun(['mock', 'getUser', 'force']), 2, /<service>\.<method>/);
  });
});

describe('runtime control from the command line: a change that cannot apply', () => {
  it('exits 1 saying the change was not applied while another writer holds the record (file lock)', async () => {
    const root = `/gov-cli-lock-${randomUUID().slice(0, 8)}`;
    const segmentDir = path.join(dir, root, 'cli.LockedService:1.0.0');
    mkdirSync(segmentDir, { recursive: true });
    // a writer (another process) holds the record's lock, fresh: every attempt meets it
    writeFileSync(path.join(segmentDir, '.config.lock'), '1\n');
    const registry = `file://${dir}?root=${root}`;
    expectOneLineError(
      await runCli(cli, ['disable', 'cli.LockedService', '--registry', registry]),
      1,
      /cannot disable: the override record .*config was changed \(or held\) by another writer during each of 10 attempts; this change was not applied/,
    );
    expect(await readEntry(`file://${dir}`, `${root}/cli.LockedService:1.0.0/config`)).toBeUndefined();
  });
});

describe('runtime control from the command line: an unreachable registry', () => {
  it('exits 3 naming the registry', async () => {
    const port = await closedPort();
    expectOneLineError(
      await runCli(cli, ['disable', 'x.Svc', '--registry', `redis://127.0.0.1:${port}`, '--timeout', '1000']),
      3,
      /cannot reach the registry redis:\/\/127\.0\.0\.1:\d+/,
    );
  });
});
