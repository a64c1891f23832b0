/**
 * Compile-time checks: `npm test` typechecks this file with tsc, so each `@ts-expect-error` below must
 * stay an error (a wrong method name or argument type, a misspelt built-in extension name, a definition
 * that leaves a method out must not compile). The runtime halves check that what the types offer is what
 * a real connection does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AppOptions,
  type ClusterName,
  defineService,
  type Implementation,
  type LoadBalancerName,
  type Logger,
  type ReferenceOptions,
  type Remote,
  type RpcError,
  type SerializerName,
  withOptions,
} from '../../src/index.js';
import { type User, type UserService, UserServiceDef } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { rawConnection, route } from '../support/raw-client.js';

afterEach(closeAll);

// A user extension's name, declared the way the docs show (module augmentation).
declare module '../../src/index.js' {
  interface ClusterNames {
    zonefailover: true;
  }
}

describe('typed references', () => {
  it('expose every method returning a Promise of its declared result, and reject wrong calls at compile time', async () => {
    const app = await testApp();
    const users: Remote<UserService> = app.refer(UserServiceDef, { mock: true });
    const pending: Promise<User> = users.getUser(1);
    await pending;
    // @ts-expect-error: no such method
    expect(() => users.getUserr(1)).toThrow();
    // @ts-expect-error: wrong argument type
    void users.getUser('1');
    // @ts-expect-error: missing argument
    void users.register('ann');
    // @ts-expect-error: per-call options keep the signature
    void withOptions(users, { timeoutMs: 10 }).say(42);
  });

  it('accept sync and async implementations, and reject a wrong one at compile time', async () => {
    const sync: Pick<Implementation<UserService>, 'say'> = { say: (m: string) => `hi ${m}` };
    const async: Pick<Implementation<UserService>, 'say'> = { say: async (m: string) => `hi ${m}` };
    // @ts-expect-error: wrong result type
    const wrong: Pick<Implementation<UserService>, 'say'> = { say: (m: string) => m.length };
    void wrong;
    // Both accepted implementations serve calls, and a caller cannot tell them apart.
    const SayDef = defineService<Pick<UserService, 'say'>>('test.Say', { methods: { say: {} } });
    for (const [name, implementation] of [
      ['sync', sync],
      ['async', async],
    ] as const) {
      const app = await testApp();
      app.provide(SayDef, implementation);
      const remote = app.refer(SayDef);
      const answer: Promise<string> = remote.say(name);
      expect(await answer).toBe(`hi ${name}`);
    }
    await closeAll();
  });
});

describe('extension names are literal types', () => {
  it('accept the built-in names and declared user names, and reject a misspelt one at compile time', () => {
    const builtins: AppOptions = {
      consumer: { loadbalance: 'roundrobin', cluster: 'failfast', retry: 'exponential', serializer: 'json' },
      server: { serializers: ['msgpack', 'v8'] },
    };
    const declared: ClusterName = 'zonefailover';
    const names: [LoadBalancerName, SerializerName] = ['shortestresponse', 'msgpack'];
    // @ts-expect-error: misspelt load balancer
    const lb: AppOptions = { consumer: { loadbalance: 'roundrobbin' } };
    // @ts-expect-error: misspelt cluster
    const cluster: AppOptions = { consumer: { cluster: 'failovr' } };
    // @ts-expect-error: misspelt retry policy
    const retry: AppOptions = { consumer: { retry: 'expo' } };
    // @ts-expect-error: misspelt serializer in a list
    const accepted: AppOptions = { server: { serializers: ['jsn'] } };
    // @ts-expect-error: misspelt on a reference
    const reference: ReferenceOptions<UserService> = { serializer: 'msgpak' };
    // @ts-expect-error: misspelt on a method of a reference
    const method: ReferenceOptions<UserService> = { methods: { getUser: { loadbalance: 'randm' } } };
    expect([builtins, declared, names, lb, cluster, retry, accepted, reference, method]).toHaveLength(9);
  });
});

interface Shop {
  slow(item: string): Promise<string>;
  buy(item: string): Promise<string>;
}

const shopImplementation: Implementation<Shop> = {
  slow: (item) => `slowly ${item}`,
  buy: (item) => `bought ${item}`,
};

/** Every method of `Remote<Shop>`; the type below fails to compile if one is missing. */
const SHOP_METHODS = ['slow', 'buy'] as const;
type Unlisted = Exclude<keyof Remote<Shop>, (typeof SHOP_METHODS)[number]>;
const everyMethodListed: [Unlisted] extends [never] ? true : false = true;

describe('types and runtime agree on which methods exist', () => {
  it('a definition that declares methods must declare every method of its interface', () => {
    // @ts-expect-error: 'buy' is missing: it would not be callable, while Remote<Shop> offers it
    const partial = defineService<Shop>('test.ShopPartial', { methods: { slow: { idempotent: true } } });
    const complete = defineService<Shop>('test.ShopComplete', {
      methods: { slow: { idempotent: true }, buy: {} },
    });
    const undeclared = defineService<Shop>('test.ShopUndeclared');
    expect(Object.keys(partial.methods!)).toEqual(['slow']);
    expect(Object.keys(complete.methods!)).toEqual(['slow', 'buy']);
    expect(undeclared.methods).toBeUndefined();
    expect(everyMethodListed).toBe(true);
  });

  it('every method the type offers is callable over a real connection, and nothing else is', async () => {
    const ShopDef = defineService<Shop>('test.Shop', { methods: { slow: { idempotent: true }, buy: {} } });
    const provider = await testApp();
    provider.provide(ShopDef, shopImplementation);
    await provider.start();
    const consumer = await testApp();
    const shop: Remote<Shop> = consumer.refer(ShopDef, { url: provider.address! });
    for (const method of SHOP_METHODS) {
      expect(typeof shop[method]).toBe('function');
      expect(await shop[method]('tea')).toMatch(/ tea$/);
    }
    const connection = rawConnection(provider.address!);
    try {
      for (const method of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const error = (await connection
          .call(route('test.Shop', method), [], { timeoutMs: 2_000 })
          .catch((e: unknown) => e)) as RpcError;
        expect(error.code).toBe('MethodNotFound');
        expect(error.message).not.toContain('slow');
      }
    } finally {
      connection.destroy();
    }
  });

  it('tells a provider whose definition leaves a method out (possible without types) that it is not callable', async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (line) => warnings.push(line), error() {} };
    // What plain JavaScript (or a cast) can still do: declare some methods only.
    const PartialDef = defineService<Shop>('test.ShopUntyped', { methods: { slow: {} } } as never);
    const provider = await testApp({ logger });
    provider.provide(PartialDef, shopImplementation);
    expect(warnings).toEqual([
      'test.ShopUntyped: buy not callable: only the methods its definition declares are (slow)',
    ]);
    await provider.start();
    const connection = rawConnection(provider.address!);
    try {
      const error = (await connection
        .call(route('test.ShopUntyped', 'buy'), ['tea'], { timeoutMs: 2_000 })
        .catch((e: unknown) => e)) as RpcError;
      expect(error.code).toBe('MethodNotFound');
    } finally {
      connection.destroy();
    }
  });
});
