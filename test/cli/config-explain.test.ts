/**
 * `callisto config explain`, the built binary: the effective configuration with the source of each
 * value (default, the file with its path, the variable), mistakes as one line with the key and exit 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/index.js';
import { buildCli, type CliBuild, expectOneLineError, jsonOf, runCli, show } from './support/cli.js';

let cli: CliBuild;
let project: string;

beforeAll(async () => {
  cli = await buildCli();
  project = mkdtempSync(path.join(tmpdir(), 'callisto-cli-config-'));
  writeFileSync(
    path.join(project, 'callisto.config.yaml'),
    'application: users\nregistry: etcd://10.0.0.1:2379\nconsumer:\n  loadbalance: roundrobin\n',
  );
}, 60_000);

afterAll(() => {
  cli?.close();
  rmSync(project, { recursive: true, force: true });
});

const explain = (args: string[], env?: Record<string, string>, cwd = project) =>
  runCli(cli, ['config', 'explain', ...args], { env, cwd });

interface Value {
  key: string;
  value: unknown;
  source: string;
  kind: string;
  default: unknown;
}

describe('callisto config explain', () => {
  it('names the source of every value: default, the file (with its path), the variable', async () => {
    const file = path.join(project, 'callisto.config.yaml');
    const result = await explain(['--json'], { CALLISTO_CONSUMER_TIMEOUT_MS: '500' });
    expect(result.code, show(result)).toBe(0);
    const values = jsonOf(result)['values'] as Value[];
    const of = (key: string) => values.find((v) => v.key === key);
    expect(of('application')).toEqual({
      key: 'application',
      value: 'users',
      source: `file ${file}`,
      kind: 'file',
      default: 'callisto-app',
    });
    expect(of('registry')).toMatchObject({ value: ['etcd://10.0.0.1:2379'], kind: 'file' });
    expect(of('consumer.loadbalance')).toMatchObject({ value: 'roundrobin', source: `file ${file}` });
    expect(of('consumer.timeoutMs')).toMatchObject({
      value: 500,
      source: 'environment variable CALLISTO_CONSUMER_TIMEOUT_MS',
      kind: 'environment',
      default: 3000,
    });
    // set by nobody, although the file sets other keys of its section
    expect(of('consumer.retries')).toMatchObject({ value: 2, source: 'default', kind: 'default' });
    expect(of('server.port')).toMatchObject({ value: 0, source: 'default' });
    expect(of('server.tags')).toMatchObject({ value: {}, source: 'default' });
    // every key of the configuration, once
    const keys = values.map((v) => v.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('consumer.emptyProtection');
    expect(keys).toContain('server.http.port');
    // sections flattened (server.tls.key), maps whole (server.tags, server.auth.tokens, server.limits)
    const leafCount = (value: object): number =>
      Object.entries(value).reduce(
        (sum, [key, child]) =>
          sum +
          (typeof child === 'object' &&
          child !== null &&
          !Array.isArray(child) &&
          key !== 'tags' &&
          key !== 'limits' &&
          key !== 'tokens'
            ? leafCount(child)
            : 1),
        0,
      );
    expect(keys.length).toBe(leafCount(DEFAULT_CONFIG));
    expect(of('server.auth.tokens')).toMatchObject({ value: {}, source: 'default' });
  });

  it('never shows a secret: tokens, the JWT secret, credentials', async () => {
    const secrets = {
      CALLISTO_SERVER_AUTH_TOKENS: 'orders=orders-secret-token-0123456789',
      CALLISTO_SERVER_AUTH_JWT_SECRET: 'jwt-secret-0123456789abcdef0123456789',
      CALLISTO_SERVER_AUTH_DEFAULT_ACCESS: 'allow',
      CALLISTO_CONSUMER_CREDENTIALS: 'consumer-credentials-0123456789',
    };
    for (const args of [['--json'], ['--changed']]) {
      const result = await explain(args, secrets);
      const text = `${result.stdout}${result.stderr}`;
      for (const secret of ['orders-secret', 'jwt-secret', 'consumer-credentials']) {
        expect(text, args[0]).not.toContain(secret);
      }
      expect(text, args[0]).toContain('(hidden)');
    }
  });

  it('prints a table for people; --changed leaves the defaults out', async () => {
    const file = path.join(project, 'callisto.config.yaml');
    const result = await explain(['--changed'], { CALLISTO_CONSUMER_TIMEOUT_MS: '500' });
    expect(result.code, show(result)).toBe(0);
    expect(result.stdout.split('\n').map((line) => line.trimEnd())).toEqual([
      `set by: file ${file}; environment variable CALLISTO_CONSUMER_TIMEOUT_MS`,
      'KEY                   VALUE                     SOURCE',
      `application           "users"                   file ${file}`,
      `registry              ["etcd://10.0.0.1:2379"]  file ${file}`,
      'consumer.timeoutMs    500                       environment variable CALLISTO_CONSUMER_TIMEOUT_MS',
      `consumer.loadbalance  "roundrobin"              file ${file}`,
      '',
    ]);
    const all = await explain([], {}, cli.cwd);
    expect(all.stdout.split('\n')[0]).toBe('every value is a default');
    expect(all.stdout).toMatch(/^server\.maxConnections\s+4096\s+default$/m);
  });

  it('--config names the file to read', async () => {
    const other = path.join(project, 'other.json');
    writeFileSync(other, JSON.stringify({ server: { port: 20880 } }));
    const values = jsonOf(await explain(['--config', other, '--json']))['values'] as Value[];
    expect(values.find((v) => v.key === 'server.port')).toMatchObject({
      value: 20880,
      source: `file ${other}`,
    });
    expect(values.find((v) => v.key === 'application')).toMatchObject({ source: 'default' });
  });

  it('a configuration mistake: one line with the key, the value, where it was set and what is allowed; exit 2', async () => {
    const bad = path.join(project, 'bad.yaml');
    writeFileSync(bad, 'consumer:\n  loadbalance: roundrobbin\n');
    expectOneLineError(
      await explain(['--config', bad]),
      2,
      new RegExp(
        `^error: invalid configuration: consumer\\.loadbalance = "roundrobbin" \\(from file ${bad}\\); expected one of the registered loadbalance names: .*did you mean "roundrobin"\\?$`,
      ),
    );
    expectOneLineError(
      await explain([], { CALLISTO_CONSUMER_TIMEOUT: '5' }),
      2,
      /unknown variable CALLISTO_CONSUMER_TIMEOUT = "5" .*did you mean CALLISTO_CONSUMER_TIMEOUT_MS\?/,
    );
    expectOneLineError(
      await explain(['--config', 'missing.yaml']),
      2,
      /^error: invalid --config = "missing\.yaml"; expected an existing file \(looked for .*missing\.yaml\)$/,
    );
    const yaml = path.join(project, 'broken.yaml');
    writeFileSync(yaml, 'consumer: [\n');
    expectOneLineError(await explain(['--config', yaml]), 2, /configFile .*expected valid YAML/);
  });
});
