/**
 * Calls in hessian2 between a Callisto consumer and provider over TCP: arguments, results and error
 * payloads in Hessian 2.0 (serializer id 5 in the frame), chosen per reference or for the app, and a
 * provider that accepts only hessian2.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, javaClassOf, javaEnum, withJavaClass } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

interface User {
  id: number;
  name: string;
  balance: bigint;
  born: Date;
  tags: string[];
}

class InsufficientFunds extends Error {
  override name = 'InsufficientFunds';
  constructor(
    readonly account: string,
    readonly missing: bigint,
  ) {
    super(`${account} is short by ${missing}`);
  }
}

interface Accounts {
  getUser(id: number): Promise<User>;
  transfer(from: string, amount: bigint, note: Buffer): Promise<{ left: bigint; at: Date }>;
  roundTrip(value: unknown): Promise<unknown>;
  nothing(): Promise<void>;
}

const AccountsDef = defineService<Accounts>('example.Accounts', {
  version: '1.0.0',
  errors: [InsufficientFunds],
  methods: { getUser: {}, transfer: {}, roundTrip: {}, nothing: {} },
});

const seen: unknown[][] = [];

async function provider(server: Record<string, unknown> = {}) {
  const app = await testApp({ server });
  app.provide(AccountsDef, {
    getUser: (id) =>
      withJavaClass('com.example.User', {
        id,
        name: `user-${id}`,
        balance: 2n ** 62n,
        born: new Date(86_400_000),
        tags: ['a'],
      }),
    transfer(from, amount, note) {
      seen.push([from, amount, note]);
      if (amount > 100n) throw new InsufficientFunds(from, amount - 100n);
      return { left: 100n - amount, at: new Date(60_000) };
    },
    roundTrip: (value) => value,
    nothing: () => undefined,
  });
  await app.start();
  return app;
}

afterEach(async () => {
  seen.length = 0;
  await closeAll();
});

describe('hessian2 calls over TCP', () => {
  it('carries arguments, results and Java class names per reference', async () => {
    const server = await provider({ serializers: ['hessian2'] });
    const consumer = await testApp();
    const accounts = consumer.refer(AccountsDef, {
      url: server.address!,
      serializer: 'hessian2',
      injvm: false,
    });
    const user = await accounts.getUser(7);
    expect(user).toEqual({
      id: 7,
      name: 'user-7',
      balance: 2n ** 62n,
      born: new Date(86_400_000),
      tags: ['a'],
    });
    expect(javaClassOf(user)).toBe('com.example.User');
    expect(await accounts.transfer('acc-1', 40n, Buffer.from('hi'))).toEqual({
      left: 60n,
      at: new Date(60_000),
    });
    expect(seen).toEqual([['acc-1', 40n, Buffer.from('hi')]]);
    expect(await accounts.nothing()).toBeUndefined();
    const node = withJavaClass('com.example.Node', {
      name: 'loop',
      next: null as unknown,
      color: javaEnum('com.example.Color', 'RED'),
    });
    node.next = node;
    const back = (await accounts.roundTrip([node, new Map([[1, 'one']])])) as [
      typeof node,
      Map<number, string>,
    ];
    expect(back[0].next).toBe(back[0]);
    expect(javaClassOf(back[0].color)).toBe('com.example.Color');
    expect(back[1]).toEqual(new Map([[1, 'one']]));
  });

  it('carries a declared business error, its fields in details', async () => {
    const server = await provider();
    const consumer = await testApp({ consumer: { serializer: 'hessian2' } });
    const accounts = consumer.refer(AccountsDef, { url: server.address!, injvm: false });
    const failure = await accounts.transfer('acc-2', 150n, Buffer.alloc(0)).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: 'ProviderError',
      name: 'InsufficientFunds',
      message: 'acc-2 is short by 50',
      details: { account: 'acc-2', missing: 50n },
    });
  });

  it('is refused by a provider that accepts only other serializers, and refuses what it cannot carry', async () => {
    const server = await provider({ serializers: ['msgpack'] });
    const consumer = await testApp();
    const accounts = consumer.refer(AccountsDef, {
      url: server.address!,
      serializer: 'hessian2',
      injvm: false,
    });
    await expect(accounts.getUser(1)).rejects.toMatchObject({ code: 'BadRequest' });
    const open = await provider();
    const ok = consumer.refer(AccountsDef, { url: open.address!, serializer: 'hessian2', injvm: false });
    await expect(ok.roundTrip(new Set([1]))).rejects.toThrow(/cannot carry a Set/);
    await expect(ok.roundTrip(2n ** 64n)).rejects.toThrow(/outside the 64-bit range/);
  });
});
