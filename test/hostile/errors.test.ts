/**
 * Errors, over real sockets: what a handler's error tells a remote caller. Declared business errors
 * keep their fields; other errors only their name and message; system errors (fs, net) are scrubbed
 * and logged on the provider under a reference; failures of Callisto itself are Internal; too many
 * arguments are refused before the handler; MethodNotFound names no other method; and
 * `server.exposeErrors: 'all'` shows everything to trusted callers.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, type Logger, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { rawConnection, route } from '../support/raw-client.js';

afterEach(closeAll);

class InsufficientFundsError extends Error {
  override name = 'InsufficientFundsError';
  constructor(
    readonly balance: number,
    readonly requested: number,
  ) {
    super(`balance ${balance} is below ${requested}`);
  }
}

class AuditTrailError extends Error {
  override name = 'AuditTrailError';
  readonly internalTicket = 'OPS-4711';
  readonly host = 'db-7.internal';
}

interface Bank {
  withdraw(amount: number): Promise<number>;
  audit(): Promise<void>;
  statement(): Promise<string>;
  transfer(): Promise<void>;
  downstream(port: number): Promise<void>;
  sum(...values: number[]): Promise<number>;
  weird(): Promise<unknown>;
}

const BankDef = defineService<Bank>('hostile.Bank', {
  errors: [InsufficientFundsError, 'LimitExceeded'],
  methods: {
    withdraw: {},
    audit: {},
    statement: {},
    transfer: {},
    downstream: {},
    sum: {},
    weird: {},
  },
});

const SECRET_PATH = '/var/lib/bank/statements/ann-2024.pdf';

async function bank(options: Parameters<typeof testApp>[0] = {}) {
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (message) => lines.push(message),
    error: (message) => lines.push(message),
  };
  const provider = await testApp({ ...options, logger });
  provider.provide(BankDef, {
    withdraw(amount) {
      throw new InsufficientFundsError(10, amount);
    },
    audit() {
      throw new AuditTrailError('audit trail unavailable');
    },
    async statement() {
      const { readFile } = await import('node:fs/promises');
      return readFile(SECRET_PATH, 'utf8');
    },
    transfer() {
      const error = new Error('daily limit reached') as Error & { limit: number };
      error.name = 'LimitExceeded';
      error.limit = 500;
      throw error;
    },
    async downstream(port) {
      // a downstream call inside the handler fails; its RpcError wraps an ECONNREFUSED
      const inner = await testApp();
      try {
        await inner.refer(BankDef, { url: `127.0.0.1:${port}`, cluster: 'failfast' }).audit();
      } finally {
        await inner.close();
      }
    },
    sum: (...values) => values.reduce((a, b) => a + b, 0),
    weird: () => ({ fn: Symbol('not encodable') }),
  });
  await provider.start();
  const consumer = await testApp();
  return { provider, lines, ref: consumer.refer(BankDef, { url: provider.address!, cluster: 'failfast' }) };
}

async function failure(call: Promise<unknown>): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(RpcError.is(error)).toBe(true);
  return error as RpcError;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('hostile: what errors tell a remote caller', () => {
  it('carries a declared business error with its name, message and fields (by class and by name)', async () => {
    const { ref } = await bank();
    const byClass = await failure(ref.withdraw(100));
    expect(byClass).toMatchObject({ code: 'ProviderError', name: 'InsufficientFundsError', remote: true });
    expect(byClass.details).toEqual({ balance: 10, requested: 100 });
    const byName = await failure(ref.transfer());
    expect(byName).toMatchObject({ name: 'LimitExceeded', message: 'daily limit reached' });
    expect(byName.details).toEqual({ limit: 500 });
  });

  it('gives an undeclared error its name and message only', async () => {
    const { ref } = await bank();
    const error = await failure(ref.audit());
    expect(error).toMatchObject({ code: 'ProviderError', name: 'AuditTrailError' });
    expect(error.message).toBe('audit trail unavailable');
    expect(error.details).toEqual({});
  });

  it('scrubs a filesystem error and logs it on the provider under a reference the caller gets', async () => {
    const { ref, lines } = await bank();
    const error = await failure(ref.statement());
    expect(error.code).toBe('ProviderError');
    const seen = JSON.stringify({ message: error.message, name: error.name, details: error.details });
    for (const leak of ['/var/lib', 'ann-2024', 'ENOENT', 'errno', 'syscall', 'open']) {
      expect(seen).not.toContain(leak);
    }
    const ref_ = /ref (\S+)\)/.exec(error.message)?.[1];
    expect(ref_).toBeDefined();
    const logged = lines.find((line) => line.includes(`ref ${ref_}`));
    expect(logged).toContain(SECRET_PATH);
    expect(logged).toContain('ENOENT');
    expect(logged).toContain('hostile.Bank.statement');
  });

  it('scrubs a downstream connection failure (an RpcError caused by ECONNREFUSED)', async () => {
    const { ref, lines } = await bank();
    const port = await closedPort();
    const error = await failure(ref.downstream(port));
    expect(error.message).not.toContain(String(port));
    expect(error.message).not.toContain('ECONNREFUSED');
    expect(lines.some((line) => line.includes(String(port)))).toBe(true);
  });

  it('refuses more than 10,000 arguments with BadRequest before calling the handler', async () => {
    const { provider } = await bank();
    const connection = rawConnection(provider.address!);
    try {
      const args = Array.from({ length: 500_000 }, () => 1);
      const error = await failure(connection.call(route('hostile.Bank', 'sum'), args, { timeoutMs: 5_000 }));
      expect(error.code).toBe('BadRequest');
      expect(error.message).toContain('500000 arguments');
      expect(await connection.call(route('hostile.Bank', 'sum'), [1, 2, 3], { timeoutMs: 5_000 })).toBe(6);
    } finally {
      connection.destroy();
    }
  });

  it('answers Internal when the result cannot be encoded (a failure of Callisto, not of the handler)', async () => {
    const { ref } = await bank();
    const error = await failure(ref.weird());
    expect(error.code).toBe('Internal');
    expect(error.message).toContain('cannot encode the result of hostile.Bank.weird');
  });

  it('does not tell a remote caller which methods exist', async () => {
    const { provider } = await bank();
    const connection = rawConnection(provider.address!);
    try {
      const error = await failure(connection.call(route('hostile.Bank', 'drain'), [], { timeoutMs: 5_000 }));
      expect(error.code).toBe('MethodNotFound');
      expect(error.message).toContain('"drain"');
      for (const method of ['withdraw', 'audit', 'statement', 'sum'])
        expect(error.message).not.toContain(method);
    } finally {
      connection.destroy();
    }
  });

  it("shows everything to trusted callers with server.exposeErrors: 'all'", async () => {
    const { ref, provider } = await bank({ server: { exposeErrors: 'all' } });
    const audit = await failure(ref.audit());
    expect(audit.details).toEqual({ internalTicket: 'OPS-4711', host: 'db-7.internal' });
    const statement = await failure(ref.statement());
    expect(statement.message).toContain(SECRET_PATH);
    expect(statement.details).toMatchObject({ code: 'ENOENT', syscall: 'open', path: SECRET_PATH });
    const connection = rawConnection(provider.address!);
    try {
      const missing = await failure(
        connection.call(route('hostile.Bank', 'drain'), [], { timeoutMs: 5_000 }),
      );
      expect(missing.message).toContain('callable: withdraw, audit');
    } finally {
      connection.destroy();
    }
  });
});
