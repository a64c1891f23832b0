import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { callContext, defineService, type Filter, RpcError, withOptions } from '../../src/index.js';
import { FrameFlag, FrameKind, HEADER_BYTES } from '../../src/protocol/frame.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { rawConnection, route, sendGarbage } from '../support/raw-client.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

async function providerWith(impl = new UserServiceImpl(), options = {}) {
  const provider = await testApp({ application: 'provider', ...options });
  provider.provide(UserServiceDef, impl);
  await provider.start();
  return { provider, impl, address: provider.address! };
}

async function consumerOf(address: string, options = {}) {
  const consumer = await testApp({ application: 'consumer' });
  return consumer.refer(UserServiceDef, { url: address, ...options });
}

describe('typed calls over TCP', () => {
  it('returns results with types preserved, sync and async implementations alike', async () => {
    const { address } = await providerWith();
    const users = await consumerOf(address);
    const user = await users.getUser(7);
    expect(user).toEqual({
      id: 7,
      name: 'user-7',
      email: 'user7@example.com',
      createdAt: new Date(1_700_000_000_007),
    });
    expect(user.createdAt).toBeInstanceOf(Date);
    expect(await users.say('world')).toBe('hello world');
  });

  it('multiplexes many calls in flight on one connection', async () => {
    const { provider, address } = await providerWith();
    const users = await consumerOf(address);
    const results = await Promise.all(Array.from({ length: 2_000 }, (_, i) => users.getUser(i)));
    expect(results.map((u) => u.id)).toEqual(Array.from({ length: 2_000 }, (_, i) => i));
    expect(appInternals(provider).provider.server!.connectionCount).toBe(1);
  });

  it('carries a provider error with its name, message, code and own fields, without the stack', async () => {
    const { address } = await providerWith();
    const users = await consumerOf(address);
    const error = await users.withdraw(100).catch((e: unknown) => e);
    expect(RpcError.is(error)).toBe(true);
    const rpc = error as RpcError;
    expect(rpc).toMatchObject({ name: 'InsufficientFundsError', code: 'ProviderError', remote: true });
    expect(rpc.message).toBe('balance 10 is below 100');
    expect(rpc.details).toEqual({ balance: 10, requested: 100 });
    expect(rpc.remoteStack).toBeUndefined();
  });

  it('sends the stack only when the provider enables exposeStack', async () => {
    const { address } = await providerWith(new UserServiceImpl(), { server: { exposeStack: true } });
    const users = await consumerOf(address);
    const error = (await users.withdraw(1).catch((e: unknown) => e)) as RpcError;
    // The provider's own stack: its error line, then the frame of the method that threw.
    expect(error.remoteStack).toMatch(/^InsufficientFundsError: balance 10 is below 1\n\s+at .*withdraw/);
    expect(error.remoteStack).toContain('user-service.ts');
  });

  it('times out a slow call with a Timeout error and frees its state', async () => {
    const { address, provider } = await providerWith();
    const consumer = await testApp({ application: 'consumer' });
    const users = consumer.refer(UserServiceDef, { url: address });
    expect(await users.say('warm')).toBe('hello warm');
    const [connection] = appInternals(consumer).consumer.pool.connections();
    const started = Date.now();
    const error = (await withOptions(users, { timeoutMs: 100 })
      .slow(1_500)
      .catch((e: unknown) => e)) as RpcError;
    expect(error.code).toBe('Timeout');
    // It gave up at its deadline, not when the answer came (1.5 s); generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(1_200);
    // Its pending entry is gone at once, and the late answer, once the provider sends it, changes nothing.
    expect(connection!.inFlight).toBe(0);
    await waitFor(() => appInternals(provider).provider.server!.active === 0, 5_000);
    expect(connection!.inFlight).toBe(0);
    expect(await users.say('again')).toBe('hello again');
    expect(connection!.inFlight).toBe(0);
    expect(appInternals(consumer).consumer.pool.connections()).toEqual([connection]);
  });

  it('rejects every call in flight at once with a Network error when the connection is lost', async () => {
    const { provider, address } = await providerWith();
    const users = await consumerOf(address, { cluster: 'failfast' });
    const calls = Array.from({ length: 20 }, () => users.slow(5_000).catch((e: unknown) => e as RpcError));
    await waitFor(() => appInternals(provider).provider.server!.active === 20);
    provider.destroy();
    const errors = await Promise.all(calls);
    expect(errors.every((e) => (e as RpcError).code === 'Network')).toBe(true);
  });

  it('sends one-way calls without waiting for a result', async () => {
    const OneWay = defineService<{ fire(message: string): void }>('test.OneWay', {
      methods: { fire: { oneway: true } },
    });
    const started: string[] = [];
    const finished: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const provider = await testApp();
    provider.provide(OneWay, {
      async fire(message) {
        started.push(message);
        await gate;
        finished.push(message);
      },
    });
    await provider.start();
    const consumer = await testApp();
    const oneway = consumer.refer(OneWay, { url: provider.address!, timeoutMs: 1_000 });
    // Resolves although the handler cannot finish until the test lets it: nothing is awaited.
    expect(await oneway.fire('ping')).toBeUndefined();
    await waitFor(() => started.length === 1);
    expect(finished).toEqual([]);
    release();
    await waitFor(() => finished.length === 1);
  });

  it('answers nothing at all to a one-way request: no result, no error', async () => {
    const { impl, address } = await providerWith();
    const raw = await rawFrameSocket(address);
    try {
      raw.request(1, 'test.UserService', 'notify', ['ping'], FrameFlag.OneWay);
      raw.request(2, 'test.UserService', 'withdraw', [5], FrameFlag.OneWay); // throws
      raw.request(3, 'test.UserService', 'nope', [], FrameFlag.OneWay); // no such method
      raw.request(4, 'test.Nope', 'say', ['x'], FrameFlag.OneWay); // no such service
      raw.ping(99);
      // Frames come back in order: an answer to any of the requests would come before the pong.
      const frames = await raw.until((frame) => frame.kind === FrameKind.Heartbeat);
      expect(frames.map((frame) => [frame.kind, frame.requestId])).toEqual([[FrameKind.Heartbeat, 99]]);
      expect(impl.notifications).toEqual(['ping']);
      // The same request as two-way is answered, on the same connection.
      raw.request(5, 'test.UserService', 'say', ['x']);
      const answer = await raw.until((frame) => frame.kind === FrameKind.Response);
      expect(answer.at(-1)).toMatchObject({ requestId: 5, status: 0 });
    } finally {
      raw.close();
    }
  });

  it('cancels a call through an AbortSignal', async () => {
    const { address } = await providerWith();
    const users = await consumerOf(address);
    const controller = new AbortController();
    const call = withOptions(users, { signal: controller.signal }).slow(2_000);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'Cancelled' });
  });

  it('passes attachments and the deadline to the provider, which sees them in callContext()', async () => {
    const Ctx = defineService<{ whoami(): Promise<Record<string, unknown>> }>('test.Ctx', {
      methods: { whoami: {} },
    });
    const provider = await testApp();
    provider.provide(Ctx, {
      whoami() {
        const ctx = callContext()!;
        return {
          trace: ctx.attachments.trace,
          token: ctx.attachments.token,
          hasDeadline: ctx.deadline > Date.now(),
        };
      },
    });
    await provider.start();
    const consumer = await testApp();
    const ctx = consumer.refer(Ctx, { url: provider.address!, attachments: { token: 'secret' } });
    expect(await withOptions(ctx, { attachments: { trace: 'abc-123' } }).whoami()).toEqual({
      trace: 'abc-123',
      token: 'secret',
      hasDeadline: true,
    });
  });

  it('aborts the provider handler signal at the caller deadline', async () => {
    let aborted: Promise<string> | undefined;
    const Waiter = defineService<{ wait(): Promise<string> }>('test.Waiter', { methods: { wait: {} } });
    const provider = await testApp();
    provider.provide(Waiter, {
      wait() {
        const signal = callContext()!.signal!;
        aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted')));
        // Answer well after the deadline: the caller must have given up by then.
        return aborted.then(() => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 100)));
      },
    });
    await provider.start();
    const consumer = await testApp();
    const waiter = consumer.refer(Waiter, { url: provider.address!, timeoutMs: 150 });
    await expect(waiter.wait()).rejects.toMatchObject({ code: 'Timeout' });
    await expect(aborted).resolves.toBe('aborted');
  });

  it('validates arguments declared with a schema and answers BadRequest', async () => {
    const { address } = await providerWith();
    const users = await consumerOf(address);
    expect(await users.register('ann', 30)).toBe('ann:30');
    const error = (await users.register('x', -1).catch((e: unknown) => e)) as RpcError;
    expect(error.code).toBe('BadRequest');
    expect(error.message).toMatch(/invalid arguments for test.UserService.register/);
  });
});

describe('what is callable', () => {
  const Plain = defineService<{ hello(name: string): Promise<string> }>('test.Plain');

  class Greeter {
    secret = 'not a method';
    hello(name: string): string {
      return `hi ${name}`;
    }
  }

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'secret'])(
    'answers MethodNotFound for %s, whatever the consumer sends',
    async (method) => {
      const provider = await testApp();
      provider.provide(Plain, new Greeter());
      await provider.start();
      const connection = rawConnection(provider.address!);
      try {
        const error = (await connection
          .call(route('test.Plain', method), [], { timeoutMs: 1_000 })
          .catch((e: unknown) => e)) as RpcError;
        expect(error.code).toBe('MethodNotFound');
        // remote callers are not told what else they could call (server.exposeErrors 'all' would)
        expect(error.message).not.toContain('hello');
        expect(await connection.call(route('test.Plain', 'hello'), ['bob'], { timeoutMs: 1_000 })).toBe(
          'hi bob',
        );
      } finally {
        connection.destroy();
      }
    },
  );

  it('refuses declared names that are never callable', () => {
    expect(() =>
      defineService<{ constructor(): void }>('test.Bad', { methods: { constructor: {} } }),
    ).toThrow(/cannot declare a method named "constructor"/);
  });

  it('answers ServiceNotFound for an unknown service or version', async () => {
    const { address } = await providerWith();
    const connection = rawConnection(address);
    try {
      await expect(
        connection.call(route('test.Nope', 'say'), [], { timeoutMs: 1_000 }),
      ).rejects.toMatchObject({ code: 'ServiceNotFound' });
      await expect(
        connection.call(route('test.UserService', 'say', undefined, '9.9.9'), ['x'], { timeoutMs: 1_000 }),
      ).rejects.toMatchObject({ code: 'ServiceNotFound' });
    } finally {
      connection.destroy();
    }
  });
});

describe('bad input on the wire', () => {
  it('closes only the connection that sent garbage and keeps serving the others', async () => {
    const { address } = await providerWith();
    const users = await consumerOf(address);
    expect(await users.say('before')).toBe('hello before');
    expect(await sendGarbage(address, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toBe('closed');
    const badVersion = Buffer.alloc(HEADER_BYTES);
    badVersion.set([0xca, 0x11, 7, FrameKind.Request]);
    expect(await sendGarbage(address, badVersion)).toBe('closed');
    expect(await users.say('after')).toBe('hello after');
  });

  it('closes a connection announcing an oversized frame before buffering it', async () => {
    const { address } = await providerWith(new UserServiceImpl(), { server: { maxFrameBytes: 64 * 1024 } });
    const users = await consumerOf(address);
    const header = Buffer.alloc(HEADER_BYTES);
    header.set([0xca, 0x11, 1, FrameKind.Request, 0, 2, 0, 0]);
    header.writeUInt32BE(1, 8);
    header.writeUInt32BE(1 << 30, 16);
    expect(await sendGarbage(address, header)).toBe('closed');
    expect(await users.say('still here')).toBe('hello still here');
  });

  it('answers a request in an unaccepted serializer with BadRequest', async () => {
    const { address } = await providerWith(new UserServiceImpl(), { server: { serializers: ['msgpack'] } });
    const json = await consumerOf(address, { serializer: 'json' });
    await expect(json.say('x')).rejects.toMatchObject({ code: 'BadRequest' });
    const ok = await consumerOf(address, { serializer: 'msgpack' });
    expect(await ok.say('x')).toBe('hello x');
  });
});

describe('serializers end to end', () => {
  it.each(['json', 'msgpack', 'v8'] as const)('round-trips rich values with %s', async (serializer) => {
    const Echo = defineService<{ echo<T>(value: T): Promise<T> }>('test.Echo', { methods: { echo: {} } });
    // v8 is for trusted peers only: accepted when named
    const provider = await testApp({ server: { serializers: [serializer] } });
    provider.provide(Echo, { echo: (value) => value });
    await provider.start();
    const consumer = await testApp();
    const echo = consumer.refer(Echo, { url: provider.address!, serializer });
    const value = {
      date: new Date(5),
      big: 2n ** 70n,
      map: new Map<unknown, unknown>([
        [1, 'one'],
        ['two', 2],
      ]),
      set: new Set([1, 2]),
      bytes: new Uint8Array([1, 2, 3]),
      nan: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      nested: [{ a: 1 }, null],
    };
    const back = (await echo.echo(value)) as typeof value;
    expect(back.date).toEqual(new Date(5));
    expect(back.big).toBe(2n ** 70n);
    expect(back.map).toEqual(value.map);
    expect(back.set).toEqual(value.set);
    expect(Buffer.from(back.bytes)).toEqual(Buffer.from([1, 2, 3]));
    expect(back.nan).toBeNaN();
    expect(back.inf).toBe(Number.POSITIVE_INFINITY);
    expect(back.nested).toEqual([{ a: 1 }, null]);
  });
});

describe('compression', () => {
  const Echo = defineService<{ echo(value: string): Promise<string> }>('test.Zip', { methods: { echo: {} } });

  it('compresses large bodies both ways when enabled, transparently', async () => {
    // Measured on the wire, through a byte-counting proxy between consumer and provider.
    const big = 'abc'.repeat(100_000); // 300 KB, deflates to about 1 KB
    const wireBytes = async (compressThresholdBytes: number) => {
      const provider = await testApp({ compressThresholdBytes });
      provider.provide(Echo, { echo: (value) => value.toUpperCase() });
      await provider.start();
      const proxy = await startTcpProxy(provider.address!);
      try {
        const consumer = await testApp({ compressThresholdBytes });
        const echo = consumer.refer(Echo, { url: proxy.address });
        expect(await echo.echo(big)).toBe(big.toUpperCase());
        expect(await echo.echo('small')).toBe('SMALL');
        await consumer.close();
        return { up: proxy.upstreamBytes, down: proxy.downstreamBytes };
      } finally {
        await proxy.close();
      }
    };
    const plain = await wireBytes(0);
    expect(plain.up).toBeGreaterThan(300_000);
    expect(plain.down).toBeGreaterThan(300_000);
    const compressed = await wireBytes(1024);
    expect(compressed.up).toBeLessThan(10_000); // the request
    expect(compressed.down).toBeLessThan(10_000); // and the response
  });

  it('refuses a compressed body that would inflate past the maximum frame size', async () => {
    const provider = await testApp({ server: { maxFrameBytes: 64 * 1024 } });
    provider.provide(Echo, { echo: (value) => value });
    await provider.start();
    const consumer = await testApp({ compressThresholdBytes: 1024 });
    const echo = consumer.refer(Echo, { url: provider.address! });
    // 4 MiB of zeros deflate to a few KiB: a small frame that must not expand on the provider.
    await expect(echo.echo('\0'.repeat(4 * 1024 * 1024))).rejects.toMatchObject({ code: 'Serialization' });
    expect(await echo.echo('ok')).toBe('ok');
  });
});

describe('in-process calls and mocks', () => {
  it('calls a service provided by the same app without a socket, through the same filters and errors', async () => {
    const seen: string[] = [];
    const audit: Filter = (next) => (invocation) => {
      seen.push(`${invocation.method}@${invocation.remoteAddress}`);
      return next(invocation);
    };
    const app = await testApp({ filters: { provider: [audit] } });
    app.provide(UserServiceDef, new UserServiceImpl());
    const users = app.refer(UserServiceDef);
    expect(await users.say('local')).toBe('hello local');
    await expect(users.withdraw(5)).rejects.toMatchObject({
      code: 'ProviderError',
      name: 'InsufficientFundsError',
    });
    await expect(users.register('x', -1)).rejects.toMatchObject({ code: 'BadRequest' });
    expect(seen).toEqual(['say@injvm', 'withdraw@injvm', 'register@injvm']);
    expect(app.port).toBeUndefined();
  });

  it('answers from a mock implementation or the declared per-method default, with no provider at all', async () => {
    const app = await testApp();
    const users = app.refer(UserServiceDef, {
      mock: true,
      mockImpl: { getUser: (id: number) => ({ id, name: 'mocked', email: '', createdAt: new Date(0) }) },
    });
    expect((await users.getUser(3)).name).toBe('mocked');
    expect(await users.say('x')).toBe('mock x');
    expect(await users.withdraw(1)).toBeUndefined();
  });
});

describe('lifecycle', () => {
  it('reports the real port, closes idempotently and leaks no socket or timer', async () => {
    const before = resourceCounts();
    const { provider, address } = await providerWith();
    expect(provider.port).toBeGreaterThan(0);
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: address });
    await Promise.all(Array.from({ length: 50 }, (_, i) => users.getUser(i)));
    await withOptions(users, { timeoutMs: 5_000 }).slow(10); // a call that used a timer on both sides
    await Promise.all([consumer.close(), consumer.close()]);
    await provider.close();
    await provider.close();
    expect(provider.state).toBe('closed');
    const noMoreThanBefore = () =>
      Object.entries(resourceCounts()).every(([name, count]) => count <= (before[name] ?? 0));
    await waitFor(noMoreThanBefore).catch(() => {
      throw new Error(`leaked: before ${JSON.stringify(before)} after ${JSON.stringify(resourceCounts())}`);
    });
  });
});
