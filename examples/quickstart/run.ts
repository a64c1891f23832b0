/**
 * The README's quick start in one runnable file: a provider and a consumer app in one process, talking
 * over a real TCP connection (direct address, no registry), with per-call options, a business error,
 * a timeout, argument validation and a mock reference.
 *
 *   npx tsx examples/quickstart/run.ts
 */
import { z } from 'zod';
import { callisto, defineService, RpcError, withOptions } from '../../src/index.js';

interface Account {
  id: number;
  owner: string;
  balance: bigint;
  openedAt: Date;
}

interface AccountService {
  get(id: number): Promise<Account>;
  withdraw(id: number, amount: bigint): Promise<bigint>;
  statement(id: number, months: number): Promise<string[]>;
}

const AccountServiceDef = defineService<AccountService>('example.AccountService', {
  version: '1.0.0',
  // business errors of this service: they reach callers with their fields (others with name and message)
  errors: ['InsufficientFunds'],
  methods: {
    get: {
      idempotent: true,
      mock: (id: number) => ({ id, owner: 'mock', balance: 0n, openedAt: new Date(0) }),
    },
    withdraw: {},
    statement: {
      args: z.tuple([z.number().int().positive(), z.number().int().min(1).max(12)]),
      timeoutMs: 500,
    },
  },
});

class InsufficientFunds extends Error {
  override name = 'InsufficientFunds';
  constructor(readonly balance: bigint) {
    super(`balance is only ${balance}`);
  }
}

const accounts = new Map<number, Account>([
  [1, { id: 1, owner: 'ann', balance: 100n, openedAt: new Date('2024-03-01') }],
]);

const provider = await callisto({ application: 'accounts', logLevel: 'warn', load: { configFile: false } });
provider.provide(AccountServiceDef, {
  get(id) {
    const account = accounts.get(id);
    if (!account) throw new RpcError('BadRequest', `no account ${id}`);
    return account;
  },
  withdraw(id, amount) {
    const account = accounts.get(id)!;
    if (account.balance < amount) throw new InsufficientFunds(account.balance);
    account.balance -= amount;
    return account.balance;
  },
  async statement(_id, months) {
    await new Promise((resolve) => setTimeout(resolve, months * 100));
    return Array.from({ length: months }, (_, i) => `month ${i + 1}: ok`);
  },
});
await provider.start();
console.log(`provider listening on ${provider.address}`);

const consumer = await callisto({ application: 'web', logLevel: 'warn', load: { configFile: false } });
const accountsRef = consumer.refer(AccountServiceDef, { url: provider.address });

const account = await accountsRef.get(1);
console.log(
  `get(1) -> owner ${account.owner}, balance ${account.balance} (${typeof account.balance}), opened ${account.openedAt.toISOString().slice(0, 10)}`,
);
console.log(`withdraw(1, 30n) -> ${await accountsRef.withdraw(1, 30n)}`);

try {
  await accountsRef.withdraw(1, 1_000n);
} catch (error) {
  if (RpcError.is(error))
    console.log(
      `withdraw(1, 1000n) -> ${error.code} ${error.name}: ${error.message}; details ${JSON.stringify(error.details, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
    );
}
try {
  await accountsRef.statement(1, 13);
} catch (error) {
  if (RpcError.is(error)) console.log(`statement(1, 13) -> ${error.code}: ${error.message}`);
}
console.log(`statement(1, 2) -> ${JSON.stringify(await accountsRef.statement(1, 2))}`);
try {
  await withOptions(accountsRef, { timeoutMs: 150 }).statement(1, 6);
} catch (error) {
  if (RpcError.is(error)) console.log(`statement(1, 6) with a 150 ms timeout -> ${error.code}`);
}

const mocked = consumer.refer(AccountServiceDef, { mock: true });
console.log(`mock get(9) -> owner ${(await mocked.get(9)).owner}`);

await consumer.close();
await provider.close();
console.log('closed');
