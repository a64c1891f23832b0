/**
 * refer(): the options of a reference and of each method are checked when the reference is made, never
 * at the first call: unknown keys, values, extension names, method names, addresses.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { LoadBalancerFactory } from '../../src/extend.js';
import { type CallistoApp, ConfigError, defineService, type ReferenceOptions } from '../../src/index.js';
import { createRoundRobinLoadBalancer } from '../../src/loadbalance/index.js';
import { type UserService, UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

declare module '../../src/index.js' {
  interface LoadBalancerNames {
    counting: true;
  }
}

function referError(app: CallistoApp, options: ReferenceOptions<UserService>): ConfigError {
  try {
    app.refer(UserServiceDef, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('refer() accepted the options');
}

const SOURCE = 'code, refer(test.UserService) options';

/** A TCP server posing as a provider that counts connection attempts (there must be none). */
async function countingServer(): Promise<{ address: string; connections: () => number; close(): void }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    connections: () => connections,
    close: () => server.close(),
  };
}

describe('refer() checks names of extensions at once', () => {
  it.each([
    [{ loadbalance: 'roundrobbin' }, 'loadbalance', 'roundrobin'],
    [{ cluster: 'failfst' }, 'cluster', 'failfast'],
    [{ retry: 'fixd' }, 'retry', 'fixed'],
    [{ serializer: 'jsn' }, 'serializer', 'json'],
  ] as const)(
    '%o fails at refer() with a suggestion, before anything connects',
    async (options, key, meant) => {
      const provider = await countingServer();
      try {
        const app = await testApp();
        const error = referError(app, { url: provider.address, ...(options as object) });
        expect(error).toMatchObject({
          key: `refer(test.UserService).${key}`,
          value: Object.values(options)[0],
          suggestion: meant,
          source: SOURCE,
        });
        expect(error.message).toContain('expected one of the registered');
        expect(provider.connections()).toBe(0);
      } finally {
        provider.close();
      }
    },
  );

  it('checks the names a method sets too, for every listed method, at refer()', async () => {
    const app = await testApp();
    const error = referError(app, {
      url: '127.0.0.1:1',
      methods: {
        getUser: { loadbalance: 'roundrobin' },
        say: { cluster: 'failsafe' },
        slow: { retry: 'expo' as never },
      },
    });
    expect(error).toMatchObject({
      key: 'refer(test.UserService).methods.slow.retry',
      value: 'expo',
      suggestion: 'exponential',
      source: SOURCE,
    });
  });
});

describe('refer() checks keys and values', () => {
  it('rejects an unknown key of the reference or of a method, with the closest known key', async () => {
    const app = await testApp();
    const reference = referError(app, { url: '127.0.0.1:1', timeout: 5 } as never);
    expect(reference).toMatchObject({ key: 'refer(test.UserService).timeout', unknownKey: true });
    expect(reference.suggestion).toBe('refer(test.UserService).timeoutMs');
    const method = referError(app, { url: '127.0.0.1:1', methods: { say: { idempotant: true } } } as never);
    expect(method.message).toMatch(
      /^invalid configuration: unknown key refer\(test\.UserService\)\.methods\.say\.idempotant = true \(from code, refer\(test\.UserService\) options\); expected one of the options .*; did you mean refer\(test\.UserService\)\.methods\.say\.idempotent\?$/,
    );
  });

  it('rejects options for a method the definition does not declare', async () => {
    const app = await testApp();
    const error = referError(app, { url: '127.0.0.1:1', methods: { getUsr: { timeoutMs: 5 } } } as never);
    expect(error).toMatchObject({ key: 'refer(test.UserService).methods.getUsr', suggestion: 'getUser' });
    expect(error.expected).toBe(
      'a method declared by test.UserService: getUser, say, withdraw, slow, notify, register',
    );
  });

  it('rejects a bad value of the reference or of a method', async () => {
    const app = await testApp();
    expect(referError(app, { url: '127.0.0.1:1', timeoutMs: -5 }).message).toBe(
      `invalid configuration: refer(test.UserService).timeoutMs = -5 (from ${SOURCE}); expected an integer >= 0`,
    );
    expect(
      referError(app, { url: '127.0.0.1:1', methods: { getUser: { hashArguments: [-1] } } }).message,
    ).toBe(
      `invalid configuration: refer(test.UserService).methods.getUser.hashArguments[0] = -1 (from ${SOURCE}); expected an integer >= 0`,
    );
    expect(referError(app, { url: '127.0.0.1:1', mock: 'yes' as never }).expected).toBe(
      "true, false, 'force' or 'fail'",
    );
  });

  it('says that an app-wide option is not set per reference', async () => {
    const app = await testApp();
    const error = referError(app, { url: '127.0.0.1:1', connectTimeoutMs: 10 } as never);
    expect(error.message).toContain('connectTimeoutMs applies to the whole app');
    expect(error.expected).toBe("consumer.connectTimeoutMs in the app's configuration");
  });
});

describe('refer() checks where providers come from', () => {
  it('rejects a bad provider address or registry address at once', async () => {
    const app = await testApp();
    expect(referError(app, { url: '127.0.0.1' })).toMatchObject({
      key: 'refer(test.UserService).url',
      value: '127.0.0.1',
      expected: 'host:port or callisto://host:port',
    });
    const scheme = referError(app, { registry: 'fle://.callisto/registry' });
    expect(scheme).toMatchObject({
      key: 'refer(test.UserService).registry',
      suggestion: 'file://.callisto/registry',
    });
    expect(scheme.message).toContain('unknown registry kind "fle"');
    const slash = referError(app, { registry: ['etcd://127.0.0.1:2379/'] });
    expect(slash.key).toBe('refer(test.UserService).registry[0]');
    expect(slash.message).toContain('ends with a slash');
  });

  it('rejects a reference with nothing to call', async () => {
    const app = await testApp();
    const error = referError(app, {});
    expect(error.message).toContain(
      'nothing to call: the app has no registry and does not provide test.UserService',
    );
    // Mock references and services the app provides itself need neither an address nor a registry.
    expect(await app.refer(UserServiceDef, { mock: true }).say('x')).toBe('mock x');
    app.provide(UserServiceDef, new UserServiceImpl());
    await app.start();
    expect(await app.refer(UserServiceDef).say('x')).toBe('hello x');
  });
});

describe('options that pass the checks take effect', () => {
  it('uses a method’s own load balancer for that method only, over a real connection', async () => {
    const picks: string[] = [];
    const counting: LoadBalancerFactory = (options) => {
      const inner = createRoundRobinLoadBalancer(options);
      return {
        select(endpoints, invocation) {
          picks.push(invocation.method);
          return inner.select(endpoints, invocation);
        },
      };
    };
    // Two providers: with one, no balancer is asked.
    const providers = [await testApp(), await testApp()];
    for (const provider of providers) {
      provider.provide(UserServiceDef, new UserServiceImpl());
      await provider.start();
    }
    const consumer = await testApp({
      extend: (extensions) => extensions.register('loadbalance', 'counting', counting),
    });
    const users = consumer.refer(UserServiceDef, {
      url: providers.map((provider) => provider.address!),
      methods: { getUser: { loadbalance: 'counting', timeoutMs: 2_000 } },
    });
    expect((await users.getUser(1)).id).toBe(1);
    expect(await users.say('x')).toBe('hello x');
    expect(picks).toEqual(['getUser']);
  });

  it('a method option pointing at an unknown timeout key is caught even when the definition declares no methods', async () => {
    const Plain = defineService<{ hello(): Promise<string> }>('test.PlainRefer');
    const app = await testApp();
    expect(() =>
      app.refer(Plain, { url: '127.0.0.1:1', methods: { hello: { timeotMs: 5 } as never } }),
    ).toThrow(/did you mean refer\(test\.PlainRefer\)\.methods\.hello\.timeoutMs\?/);
  });
});
