/**
 * loadConfig: sources and precedence, and the ConfigError of every kind of mistake, naming the key, the
 * value, what is allowed and where the value was set.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, loadConfig } from '../../src/index.js';
import { loadConfigWithSources } from '../../src/internal.js';
import { configErrorOf } from '../support/config-error-of.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-config-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
};

describe('configuration sources', () => {
  it('uses the defaults when nothing is set', () => {
    expect(loadConfig({}, { cwd: dir, env: {} })).toEqual(DEFAULT_CONFIG);
  });

  it('reads callisto.config.yaml', () => {
    write(
      'callisto.config.yaml',
      'application: orders\nregistry: [ "etcd://10.0.0.1:2379" ]\nconsumer:\n  timeoutMs: 500\n',
    );
    const config = loadConfig({}, { cwd: dir, env: {} });
    expect(config.application).toBe('orders');
    expect(config.registry).toEqual(['etcd://10.0.0.1:2379']);
    expect(config.consumer.timeoutMs).toBe(500);
    expect(config.consumer.retries).toBe(2);
  });

  it('reads callisto.config.json', () => {
    write('callisto.config.json', JSON.stringify({ server: { port: 20880 } }));
    expect(loadConfig({}, { cwd: dir, env: {} }).server.port).toBe(20880);
  });

  it('reads a .properties file with the seed design keys', () => {
    write(
      'callisto.properties',
      '# seed design keys\ncallisto.registry.address=zookeeper://127.0.0.1:2181\ncallisto.server.port = 20881\ncallisto.consumer.injvm: false\n',
    );
    const config = loadConfig({}, { cwd: dir, env: {} });
    expect(config.registry).toEqual(['zookeeper://127.0.0.1:2181']);
    expect(config.server.port).toBe(20881);
    expect(config.consumer.injvm).toBe(false);
  });

  it('merges defaults < file < environment < code', () => {
    write(
      'callisto.config.yaml',
      'application: from-file\nserver:\n  port: 1000\n  host: 0.0.0.0\nconsumer:\n  retries: 5\n',
    );
    const env = {
      CALLISTO_SERVER_PORT: '2000',
      CALLISTO_CONSUMER_RETRIES: '4',
      CALLISTO_APPLICATION: 'from-env',
    };
    const config = loadConfig({ application: 'from-code' }, { cwd: dir, env });
    expect(config.application).toBe('from-code');
    expect(config.server.port).toBe(2000);
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.consumer.retries).toBe(4);
  });

  it('reads one registry string the same way from code, a YAML or JSON file, and a variable', () => {
    // Two addresses, the first with two hosts: a comma starts a new address only before a kind://.
    const text = 'etcd://10.0.0.1:2379,10.0.0.2:2379,zookeeper://10.0.0.3:2181';
    const expected = ['etcd://10.0.0.1:2379,10.0.0.2:2379', 'zookeeper://10.0.0.3:2181'];
    expect(loadConfig({ registry: text }, { cwd: dir, env: {} }).registry).toEqual(expected);
    expect(loadConfig({}, { cwd: dir, env: { CALLISTO_REGISTRY: text } }).registry).toEqual(expected);
    write('callisto.config.yaml', `registry: ${text}\nextensions: ./ext.mjs\n`);
    const fromYaml = loadConfig({}, { cwd: dir, env: {} });
    expect(fromYaml.registry).toEqual(expected);
    expect(fromYaml.extensions).toEqual(['./ext.mjs']);
    write('callisto.config.json', JSON.stringify({ registry: 'file://.callisto/registry' }));
    expect(loadConfig({}, { cwd: dir, env: {}, configFile: 'callisto.config.json' }).registry).toEqual([
      'file://.callisto/registry',
    ]);
  });

  it('ignores CALLISTO_CONFIG and the CALLISTO_TEST_* tooling variables as keys', () => {
    const file = write('other.yaml', 'application: named-by-variable\n');
    const config = loadConfig(
      {},
      { cwd: dir, env: { CALLISTO_CONFIG: file, CALLISTO_TEST_SERVERS: 'none' } },
    );
    expect(config.application).toBe('named-by-variable');
  });
});

describe('configuration mistakes', () => {
  it('name the key, the value, what is allowed and the variable it came from', () => {
    const error = configErrorOf(() => loadConfig({}, { cwd: dir, env: { CALLISTO_SERVER_PORT: 'abc' } }));
    expect(error).toMatchObject({
      key: 'server.port',
      value: 'abc',
      expected: 'an integer from 0 to 65535',
      source: 'environment variable CALLISTO_SERVER_PORT',
    });
    expect(error.message).toBe(
      'invalid configuration: server.port = "abc" (from environment variable CALLISTO_SERVER_PORT); expected an integer from 0 to 65535',
    );
  });

  it('name the file a bad value came from', () => {
    const file = write('callisto.config.yaml', 'consumer:\n  retryBudgetRatio: 2\n');
    const error = configErrorOf(() => loadConfig({}, { cwd: dir, env: {} }));
    expect(error.message).toBe(
      `invalid configuration: consumer.retryBudgetRatio = 2 (from file ${file}); expected a number from 0 to 1`,
    );
    const properties = write('callisto.properties', 'callisto.consumer.forks=0\n');
    expect(configErrorOf(() => loadConfig({}, { cwd: dir, env: {}, configFile: properties })).message).toBe(
      `invalid configuration: consumer.forks = 0 (from file ${properties}); expected an integer >= 1`,
    );
  });

  it('say code when the value was passed in code, in words of their own (no validator wording)', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => loadConfig({ server: { port: 70000 } }, { cwd: dir, env: {} }), 'server.port = 70000'],
      [() => loadConfig({ logLevel: 'loud' as never }, { cwd: dir, env: {} }), 'logLevel = "loud"'],
      [() => loadConfig({ consumer: { retries: 1.5 } }, { cwd: dir, env: {} }), 'consumer.retries = 1.5'],
      [() => loadConfig({ registry: ['nothing'] }, { cwd: dir, env: {} }), 'registry[0] = "nothing"'],
    ];
    const expected = [
      'expected an integer from 0 to 65535',
      'expected one of debug, info, warn, error, silent',
      'expected an integer >= 0',
      'expected a registry address kind://…, e.g. etcd://127.0.0.1:2379 or file://.callisto/registry',
    ];
    cases.forEach(([attempt, keyAndValue], i) => {
      const { message } = configErrorOf(attempt);
      expect(message).toBe(
        `invalid configuration: ${keyAndValue} (from code, callisto() options); ${expected[i]}`,
      );
      expect(message).not.toMatch(/Invalid input|expected expected/);
    });
  });

  it('reject an unknown key in a file with the closest known key and the file', () => {
    const file = write('callisto.config.yaml', 'consumer:\n  timeout: 5\n');
    const error = configErrorOf(() => loadConfig({}, { cwd: dir, env: {} }));
    expect(error).toMatchObject({ key: 'consumer.timeout', value: 5, unknownKey: true });
    expect(error.suggestion).toBe('consumer.timeoutMs');
    expect(error.message).toBe(
      `invalid configuration: unknown key consumer.timeout = 5 (from file ${file}); expected a key listed in docs/configuration.md; did you mean consumer.timeoutMs?`,
    );
    expect(error.message).not.toContain('(unknown key)');
  });

  it('reject an unknown key in code, also one put in the wrong section', () => {
    const misplaced = configErrorOf(() => loadConfig({ timeoutMs: 5 } as never, { cwd: dir, env: {} }));
    expect(misplaced.message).toMatch(
      /^invalid configuration: unknown key timeoutMs = 5 \(from code, callisto\(\) options\); .*; did you mean consumer\.timeoutMs\?$/,
    );
    const section = configErrorOf(() => loadConfig({ consumr: {} } as never, { cwd: dir, env: {} }));
    expect(section.suggestion).toBe('consumer');
  });

  it('reject an unknown key in a .properties file with the closest known key', () => {
    const file = write('callisto.properties', 'callisto.server.prot=1\n');
    const error = configErrorOf(() => loadConfig({}, { cwd: dir, env: {} }));
    expect(error.message).toBe(
      `invalid configuration: unknown key callisto.server.prot = "1" (from file ${file}); expected callisto.<key> with a key listed in docs/configuration.md; did you mean callisto.server.port?`,
    );
    write('callisto.properties', 'calisto.server.port=1\n');
    expect(configErrorOf(() => loadConfig({}, { cwd: dir, env: {} })).suggestion).toBe(
      'callisto.server.port',
    );
  });

  it('reject a misspelt CALLISTO_* variable with the closest known one', () => {
    const error = configErrorOf(() =>
      loadConfig({}, { cwd: dir, env: { CALLISTO_CONSUMER_TIMEOUT: '5', PATH: '/bin' } }),
    );
    expect(error).toMatchObject({ key: 'CALLISTO_CONSUMER_TIMEOUT', value: '5', unknownKey: true });
    expect(error.message).toBe(
      'invalid configuration: unknown variable CALLISTO_CONSUMER_TIMEOUT = "5" (from the environment); expected one of the CALLISTO_* variables listed in docs/configuration.md (the prefix is reserved for them); did you mean CALLISTO_CONSUMER_TIMEOUT_MS?',
    );
    const sectionLeftOut = configErrorOf(() =>
      loadConfig({}, { cwd: dir, env: { CALLISTO_ADVERTISE_HOST: 'h' } }),
    );
    expect(sectionLeftOut.suggestion).toBe('CALLISTO_SERVER_ADVERTISE_HOST');
    // far from any (another tool's variable): ignored, with a notice the app logs (service-links.test.ts)
    const farFromAny = loadConfigWithSources({}, { cwd: dir, env: { CALLISTO_WHATEVER: '1' } });
    expect(farFromAny.config).toEqual(DEFAULT_CONFIG);
    expect(farFromAny.notices).toEqual([
      { level: 'warn', message: expect.stringMatching(/^ignored unknown variable CALLISTO_WHATEVER: /) },
    ]);
  });

  it('name a config file that is not valid YAML or JSON, or that does not exist', () => {
    const yaml = write('callisto.config.yaml', 'consumer: [unclosed\n');
    const error = configErrorOf(() => loadConfig({}, { cwd: dir, env: {} }));
    expect(error).toMatchObject({ key: 'configFile', value: yaml, source: `file ${yaml}` });
    expect(error.message).toMatch(/expected valid YAML/);
    const missing = configErrorOf(() => loadConfig({}, { cwd: dir, env: { CALLISTO_CONFIG: 'nope.yaml' } }));
    expect(missing).toMatchObject({ key: 'configFile', source: 'environment variable CALLISTO_CONFIG' });
  });
});
