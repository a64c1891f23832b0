/**
 * `${VAR}` in configuration files: substituted in string values after parsing (YAML, JSON, .properties),
 * `${VAR:-default}`, `$${` for a literal; an unset variable is a ConfigError naming the file, the key and
 * the variable, never a literal secret. A secret that still looks like a placeholder is refused from any
 * source (file, code, CALLISTO_* variable). The README's and docs/security.md's examples load as written.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} placeholders are what this file tests
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, callisto, defineService, loadConfig, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { configErrorOf } from '../support/config-error-of.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-interpolation-'));
});
afterEach(async () => {
  await closeAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

const TOKEN = 'b3f1c0ffee5eed0123456789abcdef00';
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

/** The first ```yaml block after `heading` in a Markdown file of the repository. */
function yamlBlockAfter(file: string, heading: string): string {
  const text = fs.readFileSync(path.join(REPO, file), 'utf8');
  const from = text.indexOf(heading);
  expect(from, `${file} has ${heading}`).toBeGreaterThan(-1);
  const match = /```yaml\n([\s\S]*?)```/.exec(text.slice(from));
  return match![1]!;
}

describe('${VAR} in configuration files', () => {
  it('substitutes string values in YAML: ${VAR}, ${VAR:-default}, $${ as a literal, typed keys take numbers', () => {
    write(
      'callisto.config.yaml',
      [
        'application: ${APP_NAME:-orders}',
        'server:',
        '  port: ${PORT:-7001}',
        '  auth:',
        '    tokens:',
        '      web: ${WEB_TOKEN}',
        '    defaultAccess: allow',
        'consumer:',
        '  snapshotDir: $${HOME}/snapshots',
        '  credentials: "pre-${WEB_TOKEN}-post"',
        'registry: [ "file://${REGISTRY_DIR}" ]',
      ].join('\n'),
    );
    const config = loadConfig(
      {},
      { cwd: dir, env: { WEB_TOKEN: TOKEN, REGISTRY_DIR: '/srv/reg', PORT: '' } },
    );
    expect(config.application).toBe('orders');
    expect(config.server.port).toBe(7001);
    expect(config.server.auth.tokens).toEqual({ web: TOKEN });
    expect(config.consumer.snapshotDir).toBe('${HOME}/snapshots');
    expect(config.consumer.credentials).toBe(`pre-${TOKEN}-post`);
    expect(config.registry).toEqual(['file:///srv/reg']);
    expect(
      loadConfig({}, { cwd: dir, env: { WEB_TOKEN: TOKEN, REGISTRY_DIR: 'r', PORT: '7100' } }).server.port,
    ).toBe(7100);
  });

  it('substitutes in JSON and .properties files too', () => {
    const json = write(
      'callisto.config.json',
      JSON.stringify({ consumer: { credentials: '${WEB_TOKEN}', timeoutMs: '${TIMEOUT:-1500}' } }),
    );
    const fromJson = loadConfig({}, { cwd: dir, configFile: json, env: { WEB_TOKEN: TOKEN } });
    expect(fromJson.consumer.credentials).toBe(TOKEN);
    expect(fromJson.consumer.timeoutMs).toBe(1500);
    const properties = write(
      'callisto.properties',
      'callisto.consumer.credentials=${WEB_TOKEN}\ncallisto.server.port=${PORT:-7002}\ncallisto.application=$${x}\n',
    );
    const fromProperties = loadConfig({}, { cwd: dir, configFile: properties, env: { WEB_TOKEN: TOKEN } });
    expect(fromProperties.consumer.credentials).toBe(TOKEN);
    expect(fromProperties.server.port).toBe(7002);
    expect(fromProperties.application).toBe('${x}');
  });

  it("a variable's value is text, never structure", () => {
    write('callisto.config.yaml', 'application: ${NAME}\nserver:\n  tags: { zone: "${ZONE}" }\n');
    const config = loadConfig({}, { cwd: dir, env: { NAME: 'a, b: {c: 1}', ZONE: '}\nlogLevel: debug' } });
    expect(config.application).toBe('a, b: {c: 1}');
    expect(config.server.tags).toEqual({ zone: '}\nlogLevel: debug' });
    expect(config.logLevel).toBe('info');
  });

  it('an unset variable without a default is a ConfigError naming the file, the key and the variable, in every format', () => {
    const cases: Array<[string, string, string]> = [
      [
        'callisto.config.yaml',
        'server:\n  auth:\n    tokens:\n      web: ${WEB_SERVICE_TOKEN_SECRET}\n',
        'server.auth.tokens.web',
      ],
      [
        'callisto.config.json',
        '{"consumer":{"credentials":"${WEB_SERVICE_TOKEN_SECRET}"}}',
        'consumer.credentials',
      ],
      ['callisto.properties', 'callisto.admin.token=${WEB_SERVICE_TOKEN_SECRET}\n', 'admin.token'],
      [
        'list.yaml',
        'registry:\n  - file://a\n  - "redis://h:6379?password=${WEB_SERVICE_TOKEN_SECRET}"\n',
        'registry[1]',
      ],
    ];
    for (const [name, text, key] of cases) {
      const file = write(name, text);
      const error = configErrorOf(() => loadConfig({}, { cwd: dir, configFile: file, env: { OTHER: 'x' } }));
      expect(error, name).toMatchObject({ key, source: `file ${file}` });
      expect(error.message).toContain('WEB_SERVICE_TOKEN_SECRET');
      expect(error.message).toMatch(
        /names an unset variable; expected the environment variable WEB_SERVICE_TOKEN_SECRET set, or a default/,
      );
    }
    const broken = write('broken.yaml', 'application: ${NAME\n');
    expect(configErrorOf(() => loadConfig({}, { cwd: dir, configFile: broken, env: {} })).message).toMatch(
      /application = "\$\{NAME" \(from file .*\); expected \$\{VAR\} or \$\{VAR:-default\}/,
    );
  });
});

describe('a secret is never a placeholder', () => {
  it('refuses a placeholder-shaped secret from code, CALLISTO_* variables and files (also one written with $${)', () => {
    const refused = (attempt: () => unknown, key: string, source: RegExp) => {
      const error = configErrorOf(attempt);
      expect(error.key).toBe(key);
      expect(error.source).toMatch(source);
      expect(error.message).toMatch(/an unsubstituted placeholder; expected a secret, not a placeholder/);
    };
    const placeholder = '${WEB_SERVICE_TOKEN_SECRET}';
    refused(
      () => loadConfig({ server: { auth: { tokens: { web: placeholder } } } }, { cwd: dir, env: {} }),
      'server.auth.tokens.web',
      /^code/,
    );
    refused(
      () => loadConfig({ server: { auth: { jwtSecret: placeholder } } }, { cwd: dir, env: {} }),
      'server.auth.jwtSecret',
      /^code/,
    );
    refused(
      () => loadConfig({ admin: { token: placeholder } }, { cwd: dir, env: {} }),
      'admin.token',
      /^code/,
    );
    refused(
      () => loadConfig({ consumer: { tls: { key: '${KEY_FILE}' } } }, { cwd: dir, env: {} }),
      'consumer.tls.key',
      /^code/,
    );
    refused(
      () => loadConfig({}, { cwd: dir, env: { CALLISTO_CONSUMER_CREDENTIALS: placeholder } }),
      'consumer.credentials',
      /^environment variable CALLISTO_CONSUMER_CREDENTIALS$/,
    );
    refused(
      () => loadConfig({ registry: [`redis://h:6379?password=${placeholder}`] }, { cwd: dir, env: {} }),
      'registry[0]',
      /^code/,
    );
    const escaped = write('callisto.config.yaml', 'consumer:\n  credentials: $${WEB_SERVICE_TOKEN_SECRET}\n');
    refused(
      () => loadConfig({}, { cwd: dir, env: {} }),
      'consumer.credentials',
      new RegExp(`^file ${escaped}$`),
    );
    // not a secret: a placeholder-looking value is allowed there
    expect(
      loadConfig({ application: placeholder }, { cwd: dir, env: {}, configFile: false }).application,
    ).toBe(placeholder);
  });

  it('a provider and a consumer configured with ${WEB_SERVICE_TOKEN_SECRET}: the real secret when set, a ConfigError when unset', async () => {
    const Echo = defineService<{ echo(text: string): Promise<string> }>('test.SecretEcho', {
      methods: { echo: {} },
    });
    const configFile = write(
      'callisto.config.yaml',
      [
        'server:',
        '  auth:',
        '    tokens:',
        '      web: ${WEB_SERVICE_TOKEN_SECRET}',
        '    defaultAccess: allow',
        'consumer:',
        '  credentials: ${WEB_SERVICE_TOKEN_SECRET}',
        '  snapshotDir: ""',
      ].join('\n'),
    );
    const env = { WEB_SERVICE_TOKEN_SECRET: TOKEN };
    const provider = await testApp({ load: { configFile, env } });
    provider.provide(Echo, { echo: (text) => text });
    await provider.start();
    const consumer = await testApp({ load: { configFile, env } });
    expect(await consumer.refer(Echo, { url: provider.address!, retries: 0 }).echo('ok')).toBe('ok');
    // the placeholder's text is not a credential anybody holds: the provider never accepts it
    const guesser = await testApp({ consumer: { snapshotDir: '' } });
    const guessed = await withOptions(guesser.refer(Echo, { url: provider.address!, retries: 0 }), {
      credentials: '${WEB_SERVICE_TOKEN_SECRET}',
    })
      .echo('x')
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(RpcError.is(guessed) && guessed.code).toBe('Unauthorized');
    // unset: neither side starts
    const unset = await callisto({ logLevel: 'silent', load: { configFile, env: {} } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(unset).toBeInstanceOf(ConfigError);
    expect(unset).toMatchObject({ key: 'server.auth.tokens.web', source: `file ${configFile}` });
  });
});

describe('the documented examples load as written', () => {
  it("the README's Security example and docs/security.md's authentication example", () => {
    const env = { ORDERS_TOKEN: TOKEN, BILLING_TOKEN: `${TOKEN}-billing` };
    const readme = write('readme.yaml', yamlBlockAfter('README.md', '## Security'));
    const fromReadme = loadConfig({}, { cwd: dir, configFile: readme, env });
    expect(fromReadme.server.auth.tokens).toEqual({ orders: TOKEN });
    expect(fromReadme.consumer.credentials).toBe(TOKEN);
    const security = write('security.yaml', yamlBlockAfter('docs/security.md', '## Authentication'));
    const fromSecurity = loadConfig({}, { cwd: dir, configFile: security, env });
    expect(fromSecurity.server.auth.tokens).toEqual({ orders: TOKEN, billing: `${TOKEN}-billing` });
    expect(fromSecurity.consumer.credentials).toBe(TOKEN);
    const configuration = write(
      'configuration.yaml',
      yamlBlockAfter('docs/configuration.md', '### Environment variables in files'),
    );
    const fromConfiguration = loadConfig(
      {},
      { cwd: dir, configFile: configuration, env: { WEB_SERVICE_TOKEN_SECRET: TOKEN } },
    );
    expect(fromConfiguration.server.port).toBe(20880);
    expect(fromConfiguration.server.auth.tokens).toEqual({ web: TOKEN });
    expect(fromConfiguration.registry).toEqual(['etcd://127.0.0.1:2379']);
  });
});
