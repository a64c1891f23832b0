import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG, loadConfig } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-config-'));
});
afterEach(async () => {
  await closeAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);

describe('configuration', () => {
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

  it('reads comma-separated lists from the environment', () => {
    const config = loadConfig({}, { cwd: dir, env: { CALLISTO_REGISTRY: 'etcd://a:2379,redis://b:6379' } });
    expect(config.registry).toEqual(['etcd://a:2379', 'redis://b:6379']);
  });

  it('fails with the key, the value and what was allowed', () => {
    const attempt = () => loadConfig({}, { cwd: dir, env: { CALLISTO_SERVER_PORT: 'abc' } });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/server\.port = "abc"; expected .*number/);
    expect(() => loadConfig({ server: { port: 70000 } }, { cwd: dir, env: {} })).toThrow(
      /server\.port = 70000/,
    );
    expect(() => loadConfig({ logLevel: 'loud' as never }, { cwd: dir, env: {} })).toThrow(
      /logLevel = "loud".*debug/,
    );
    expect(() => loadConfig({ registry: ['nothing'] }, { cwd: dir, env: {} })).toThrow(
      /registry\.0 = "nothing"/,
    );
  });

  it('rejects unknown keys in files', () => {
    write('callisto.config.yaml', 'consumer:\n  timeout: 5\n');
    expect(() => loadConfig({}, { cwd: dir, env: {} })).toThrow(/consumer\.timeout/);
    write('callisto.properties', 'callisto.nope=1\n');
    expect(() => loadConfig({}, { cwd: dir, env: {}, configFile: 'callisto.properties' })).toThrow(
      /callisto\.nope/,
    );
  });

  it('validates reference options when referring', async () => {
    const app = await testApp();
    const Def = (await import('../fixtures/user-service.js')).UserServiceDef;
    expect(() => app.refer(Def, { url: '127.0.0.1:1', timeoutMs: -5 })).toThrow(
      /refer\(test.UserService\)\.timeoutMs = -5/,
    );
    expect(() => app.refer(Def, { url: '127.0.0.1:1', loadbalance: 'nope' }).say('x')).toThrow(
      /no loadbalance extension named "nope"/,
    );
  });
});
