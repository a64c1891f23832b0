/**
 * callisto(): the mistakes only the app can see (names of extensions, registry kinds, addresses, client
 * packages) fail callisto() itself with a ConfigError naming the key, the value, what is allowed and
 * where it came from, before anything is listened on or connected to.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadBalancerFactory } from '../../src/extend.js';
import { type AppOptions, ConfigError } from '../../src/index.js';
import { createRandomLoadBalancer } from '../../src/loadbalance/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

async function configErrorOf(options: AppOptions): Promise<ConfigError> {
  const error = await testApp(options).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

// A user extension's name, declared to the compiler the way users do.
declare module '../../src/index.js' {
  interface LoadBalancerNames {
    zoneaware: true;
  }
}

describe('callisto() checks extension names', () => {
  it.each([
    ['loadbalance', 'roundrobbin', 'roundrobin', /random, roundrobin, consistenthash/],
    ['cluster', 'failovr', 'failover', /failover, failfast, failsafe, failback, forking, broadcast/],
    ['retry', 'exponental', 'exponential', /none, fixed, exponential/],
    ['serializer', 'msgpak', 'msgpack', /json|msgpack|v8/],
  ] as const)(
    'consumer.%s = %s fails with the registered names and a suggestion',
    async (key, value, meant, names) => {
      const error = await configErrorOf({ consumer: { [key]: value } });
      expect(error).toMatchObject({
        key: `consumer.${key}`,
        value,
        suggestion: meant,
        source: 'code, callisto() options',
      });
      expect(error.expected).toMatch(names);
      expect(error.message).toContain(`did you mean "${meant}"?`);
    },
  );

  it('names the variable or file a wrong name came from', async () => {
    const fromEnv = await configErrorOf({
      load: { env: { CALLISTO_CONSUMER_LOADBALANCE: 'roundrobbin' } },
    });
    expect(fromEnv.message).toMatch(
      /^invalid configuration: consumer\.loadbalance = "roundrobbin" \(from environment variable CALLISTO_CONSUMER_LOADBALANCE\); expected one of the registered loadbalance names: .*; did you mean "roundrobin"\?$/,
    );
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-app-config-'));
    try {
      const file = path.join(dir, 'callisto.config.yaml');
      fs.writeFileSync(file, 'server:\n  serializers: [msgpack, jsn]\n');
      const fromFile = await configErrorOf({ load: { configFile: file } });
      expect(fromFile).toMatchObject({ key: 'server.serializers[1]', value: 'jsn', source: `file ${file}` });
      expect(fromFile.suggestion).toBe('json');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts a user extension registered by the app, and only in that app', async () => {
    const zoneAware: LoadBalancerFactory = createRandomLoadBalancer;
    const app = await testApp({
      consumer: { loadbalance: 'zoneaware' },
      extend: (extensions) => extensions.register('loadbalance', 'zoneaware', zoneAware),
    });
    expect(app.config.consumer.loadbalance).toBe('zoneaware');
    const other = await configErrorOf({ consumer: { loadbalance: 'zoneaware' } });
    expect(other.key).toBe('consumer.loadbalance');
  });
});

describe('callisto() checks registry addresses', () => {
  it('rejects an unknown scheme before any network activity, blaming the scheme', async () => {
    // A live server at the etcd address listed first: nothing may connect to it.
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const error = await configErrorOf({
        registry: [`etcd://127.0.0.1:${port}`, 'fle://.callisto/registry'],
        server: { port: 0 },
      });
      expect(error).toMatchObject({
        key: 'registry[1]',
        value: 'fle://.callisto/registry',
        source: 'code, callisto() options',
        suggestion: 'file://.callisto/registry',
      });
      expect(error.message).toContain('unknown registry kind "fle"');
      expect(error.message).toContain('file, direct, etcd, zookeeper, zk, redis');
      expect(error.message).not.toMatch(/port/);
      // Let anything that was started run a little: an accept would have been counted by now.
      await new Promise((resolve) => setImmediate(resolve));
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it.each([
    [
      'etcd://127.0.0.1:2379/',
      /"127\.0\.0\.1:2379\/" ends with a slash; etcd:\/\/ takes host:port entries only, remove the "\/"/,
    ],
    ['redis://127.0.0.1:6379/0', /has a path "\/0"; redis:\/\/ takes host:port entries only/],
    ['redis://10.0.0.1:6379,10.0.0.2:6379', /2 hosts: redis:\/\/ takes one server; .* redis-sentinel:\/\//],
    ['redis-sentinel://10.0.0.1:26379,10.0.0.2:26379', /needs the master name the sentinels monitor/],
    [
      'direct://127.0.0.1',
      /"127\.0\.0\.1" has no port \(direct:\/\/ has no default port; write 127\.0\.0\.1:<port>\)/,
    ],
    ['etcd://127.0.0.1:99999', /port "99999" of "127\.0\.0\.1:99999" is not between 1 and 65535/],
    ['etcd://127.0.0.1:2379?ttl=soon', /: ttl = "soon" is not an integer >= 1; expected a registry address/],
    ['zookeeper://127.0.0.1?root=apps', /: root = "apps" is not an absolute path like \/callisto;/],
    ['127.0.0.1:2379', /expected a registry address kind:\/\/…, e\.g\. etcd:\/\/127\.0\.0\.1:2379/],
  ])('rejects %s and says what is wrong with it', async (address, why) => {
    const error = await configErrorOf({ registry: address });
    expect(error).toMatchObject({ key: 'registry[0]', value: address, source: 'code, callisto() options' });
    expect(error.message).toMatch(why);
  });

  it('names the variable a bad address came from', async () => {
    const error = await configErrorOf({
      load: { env: { CALLISTO_REGISTRY: 'zookeeper://10.0.0.1:2181,fle://x' } },
    });
    expect(error).toMatchObject({
      key: 'registry[1]',
      value: 'fle://x',
      source: 'environment variable CALLISTO_REGISTRY',
    });
  });

  it('accepts a registry kind registered by the app', async () => {
    const app = await testApp({
      registry: 'consul://127.0.0.1:8500',
      extend: (extensions) =>
        extensions.register('registry', 'consul', () => {
          throw new Error('not used by this test');
        }),
    });
    expect(app.config.registry).toEqual(['consul://127.0.0.1:8500']);
  });

  it('says which package to install when a registry client is missing', async () => {
    // A child process whose module resolver cannot see etcd3, as in a project that never installed it.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-missing-'));
    try {
      fs.writeFileSync(
        path.join(dir, 'hide.mjs'),
        `export async function resolve(specifier, context, next) {
          if (specifier === 'etcd3') {
            throw Object.assign(new Error("Cannot find package 'etcd3' imported from " + context.parentURL), { code: 'ERR_MODULE_NOT_FOUND' });
          }
          return next(specifier, context);
        }`,
      );
      fs.writeFileSync(
        path.join(dir, 'register.mjs'),
        `import { register } from 'node:module';\nregister('./hide.mjs', import.meta.url);\n`,
      );
      const script = path.join(dir, 'start.mts');
      const index = path.resolve('src/index.ts');
      fs.writeFileSync(
        script,
        `import { callisto } from ${JSON.stringify(index)};
        try {
          await callisto({ registry: 'etcd://127.0.0.1:2379', logLevel: 'silent', load: { configFile: false, env: false } });
          console.log(JSON.stringify({ resolved: true }));
        } catch (error) {
          console.log(JSON.stringify({ name: error.name, key: error.key, message: error.message }));
        }`,
      );
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--import', path.join(dir, 'register.mjs'), script],
        { timeout: 30_000 },
      );
      expect(JSON.parse(stdout)).toEqual({
        name: 'ConfigError',
        key: 'registry[0]',
        message:
          'invalid configuration: registry[0] = "etcd://127.0.0.1:2379" (from code, callisto() options): the etcd registry needs the package etcd3, which is not installed; expected the package installed: npm install etcd3',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});

describe('callisto() checks extension modules', () => {
  it('names a module that cannot be loaded, and where it was configured', async () => {
    const error = await configErrorOf({ load: { env: { CALLISTO_EXTENSIONS: './does-not-exist.mjs' } } });
    expect(error).toMatchObject({
      key: 'extensions',
      value: './does-not-exist.mjs',
      source: 'environment variable CALLISTO_EXTENSIONS',
    });
    expect(error.message).toMatch(/expected a module that can be imported$/);
  });
});
