/**
 * Authentication per connection, over real sockets: a consumer presents its credentials once for its
 * connection (the `authenticate` event) and its calls carry none; the provider verifies them once per
 * method and takes the identity for the next calls until the proof expires, then asks again — so a
 * connection whose token expired is refused, and a consumer whose token source hands out fresh tokens
 * re-authenticates on the same connection without failing a call. Calls with credentials of their own
 * are checked per call and win; every call is made by the token current when it was sent, even when
 * two references with different tokens share the connection. Bad `authenticate` events close only
 * their connection.
 */
import type { Socket } from 'node:net';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Authenticator,
  AuthFailure,
  authFilter,
  type CallerIdentity,
  callContext,
  credentialsFilter,
  defineService,
  type Logger,
  RpcError,
  withOptions,
} from '../../src/index.js';
import { EventName, FrameKind } from '../../src/protocol/frame.js';
import {
  createConnectionCredentials,
  MAX_PRESENTED_TOKEN_BYTES,
  MAX_PRESENTED_TOKENS,
} from '../../src/security/presented-credentials.js';
import { closeAll, testApp } from '../support/apps.js';
import { msgpack } from '../support/raw-client.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { waitFor } from '../support/wait-for.js';

interface Whoami {
  whoami(): Promise<{ id: string; sawCredentials: boolean }>;
  other(): Promise<string>;
}
const Who = defineService<Whoami>('test.ConnWho', { methods: { whoami: {}, other: {} } });

afterEach(closeAll);

/** A token of this test's kind: `t:<id>:<valid until, epoch ms>:<n>`, checked by `countingAuthenticator`. */
const token = (id: string, validUntilMs: number, n = 0): string => `t:${id}:${validUntilMs}:${n}`;

/** Knows the tokens `token()` makes; counts what it was asked, from which address, about which tokens. */
function countingAuthenticator() {
  const asked: Array<{ token: string; remote: string }> = [];
  const authenticator: Authenticator = {
    name: 'test',
    authenticate({ credentials, remoteAddress }) {
      if (credentials === undefined || !credentials.startsWith('t:')) return undefined;
      asked.push({ token: credentials, remote: remoteAddress });
      const [, id, until] = credentials.split(':');
      const validUntilMs = Number(until);
      if (Date.now() >= validUntilMs) throw new AuthFailure('token expired');
      return { id: id!, via: 'test', validUntilMs } satisfies CallerIdentity;
    },
  };
  return { asked, authenticator };
}

function capture(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

async function provider(authenticator: Authenticator, logger?: Logger) {
  const app = await testApp(logger === undefined ? {} : { logger, logLevel: 'debug' });
  app.provide(
    Who,
    {
      whoami() {
        const context = callContext()!;
        return { id: context.identity?.id ?? '', sawCredentials: 'authorization' in context.attachments };
      },
      other: () => callContext()!.identity?.id ?? '',
    },
    { filters: [authFilter({ authenticators: [authenticator] })] },
  );
  await app.start();
  return app;
}

const consumer = () => testApp({ consumer: { retries: 0, snapshotDir: '' } });

async function outcome(call: Promise<unknown>): Promise<RpcError | undefined> {
  return call.then(
    () => undefined,
    (error: unknown) => RpcError.from(error),
  );
}

describe('authentication per connection', () => {
  it('presents the token once: the calls carry none and the provider verifies it once per method', async () => {
    const { asked, authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const client = await consumer();
    const ordersToken = token('orders', Date.now() + 600_000);
    const who = client.refer(Who, { url: app.address!, filters: [credentialsFilter(ordersToken)] });
    for (let i = 0; i < 100; i++) {
      expect(await who.whoami()).toEqual({ id: 'orders', sawCredentials: false });
      expect(await who.other()).toBe('orders');
    }
    const concurrently = await Promise.all(Array.from({ length: 200 }, () => who.whoami()));
    expect(concurrently.every((answer) => answer.id === 'orders')).toBe(true);
    // per call, 400 questions; per connection, one per method (and one per method before the provider
    // said it takes the event, when the first calls still carried the token)
    expect(asked.length).toBeLessThanOrEqual(4);
    expect(new Set(asked.map((entry) => entry.remote)).size).toBe(1);
  });

  it('over the wire: an authenticate event, an acknowledgement, then requests without credentials are the connection’s caller', async () => {
    const { asked, authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const raw = await rawFrameSocket(app.address!);
    try {
      raw.request(1, Who.name, 'whoami', []);
      const [refused] = await raw.until((frame) => frame.requestId === 1);
      expect(refused!.status).not.toBe(0);
      expect(msgpack.decode(refused!.body)).toMatchObject({
        message: expect.stringMatching(/credentials required/),
      });

      raw.writer.event(EventName.Authenticate, 0, Buffer.from(token('billing', Date.now() + 600_000)));
      raw.request(2, Who.name, 'whoami', []);
      raw.request(3, Who.name, 'whoami', []);
      const seen = await raw.until((frame) => frame.requestId === 3);
      expect(seen.filter((frame) => frame.kind === FrameKind.Event)).toHaveLength(1);
      for (const id of [2, 3]) {
        const answer = seen.find((frame) => frame.requestId === id && frame.kind === FrameKind.Response)!;
        expect(answer.status).toBe(0);
        expect(msgpack.decode(answer.body)).toEqual({ id: 'billing', sawCredentials: false });
      }
      expect(asked).toHaveLength(1);
    } finally {
      raw.close();
    }
  });

  it('refuses the calls of a connection whose token expired, though the token was verified and kept', async () => {
    const { asked, authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const client = await consumer();
    const shortLived = token('orders', Date.now() + 400);
    const who = client.refer(Who, { url: app.address!, filters: [credentialsFilter(shortLived)] });
    expect(await who.whoami()).toMatchObject({ id: 'orders' });
    const error = await waitFor(() => outcome(who.whoami()), 5_000, {
      message: 'a connection whose token expired kept being served',
    });
    expect(error.code).toBe('Unauthorized');
    expect(error.message).toMatch(/token expired/);
    expect(error.message).not.toContain(shortLived);
    expect(new Set(asked.map((entry) => entry.remote)).size).toBe(1);
  });

  it('re-authenticates on the same connection when the token source hands out a fresh token, failing no call', async () => {
    const { asked, authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const client = await consumer();
    // a new token every 150 ms, each good for 1.5 s: every token handed out has at least 1.35 s left
    const started = Date.now();
    const fresh = () => {
      const n = Math.floor((Date.now() - started) / 150);
      return token('orders', started + n * 150 + 1_500, n);
    };
    const who = client.refer(Who, { url: app.address!, filters: [credentialsFilter(fresh)] });
    const failures: unknown[] = [];
    let calls = 0;
    const tokensVerified = () => new Set(asked.map((entry) => entry.token)).size;
    // eight callers, until the provider verified five tokens (it sees each one once it is current)
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (tokensVerified() < 5 && Date.now() - started < 20_000) {
          calls++;
          const answer = await who.whoami().catch((error: unknown) => {
            failures.push(error);
            return undefined;
          });
          if (answer !== undefined) expect(answer.id).toBe('orders');
        }
      }),
    );
    expect(failures).toEqual([]);
    expect(tokensVerified()).toBeGreaterThanOrEqual(5);
    // one connection throughout, and a question per token and method, not per call
    expect(new Set(asked.map((entry) => entry.remote)).size).toBe(1);
    expect(asked.length).toBeLessThan(calls / 4);
  });

  it('a JWT presented for the connection stops holding at its exp', async () => {
    const secret = 'jwt-hmac-secret-0123456789abcdef0123456789';
    const app = await testApp({ server: { auth: { jwtSecret: secret, defaultAccess: 'allow' } } });
    app.provide(Who, {
      whoami: () => ({ id: callContext()!.identity!.id, sawCredentials: false }),
      other: () => '',
    });
    await app.start();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const jwt = await new SignJWT({ sub: 'orders' })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience(Who.name)
      .setExpirationTime(exp)
      .sign(new TextEncoder().encode(secret));
    const client = await testApp({ consumer: { retries: 0, snapshotDir: '', credentials: jwt } });
    const who = client.refer(Who, { url: app.address! });
    expect(await who.whoami()).toMatchObject({ id: 'orders' });
    expect(await who.whoami()).toMatchObject({ id: 'orders' });
    const error = await waitFor(() => outcome(who.whoami()), 6_000, {
      message: 'an expired JWT kept the connection authenticated',
    });
    expect(error.code).toBe('Unauthorized');
    expect(error.message).toMatch(/token expired/);
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000);
  });

  it('a call’s own credentials win over its connection’s; two references with their tokens on one connection are each who they say', async () => {
    const { authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const client = await consumer();
    const until = Date.now() + 600_000;
    const asOrders = client.refer(Who, {
      url: app.address!,
      filters: [credentialsFilter(token('orders', until))],
    });
    const asBilling = client.refer(Who, {
      url: app.address!,
      filters: [credentialsFilter(token('billing', until))],
    });
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => {
        if (i % 3 === 0) return asOrders.whoami().then((answer) => ['orders', answer.id]);
        if (i % 3 === 1) return asBilling.whoami().then((answer) => ['billing', answer.id]);
        return withOptions(asOrders, { credentials: token('audit', until) })
          .whoami()
          .then((answer) => ['audit', answer.id]);
      }),
    );
    for (const [expected, actual] of answers) expect(actual).toBe(expected);
    // and a call's own credentials that do not hold are refused, never replaced by the connection's
    const error = await outcome(
      withOptions(asOrders, { credentials: token('orders', Date.now() - 1) }).whoami(),
    );
    expect(error?.code).toBe('Unauthorized');
  });
});

describe('hostile authenticate events', () => {
  it.each([
    ['over the bound', Buffer.alloc(MAX_PRESENTED_TOKEN_BYTES + 1, 'a'), /over 4096 bytes/],
    ['empty', Buffer.alloc(0), /not a token/],
  ])(
    'closes a connection whose authenticate event is %s, naming the peer; others are served',
    async (_, body, why) => {
      const { lines, logger } = capture();
      const { authenticator } = countingAuthenticator();
      const app = await provider(authenticator, logger);
      const client = await consumer();
      const who = client.refer(Who, {
        url: app.address!,
        filters: [credentialsFilter(token('orders', Date.now() + 600_000))],
      });
      expect(await who.whoami()).toMatchObject({ id: 'orders' });
      const raw = await rawFrameSocket(app.address!);
      const port = String((raw.socket as unknown as Socket).localPort);
      const closed = new Promise<void>((resolve) => raw.socket.once('close', () => resolve()));
      raw.writer.event(EventName.Authenticate, 0, body);
      await closed;
      const line = await waitFor(() => lines.find((text) => text.includes('authenticate event')), 5_000, {
        message: 'no log line about the event',
      });
      expect(line).toContain(`:${port}`);
      expect(line).toMatch(why);
      expect(await who.whoami()).toMatchObject({ id: 'orders' });
    },
  );

  it('a flood of authenticate events costs a bounded memory: the connection keeps the last few tokens, and one acknowledgement', async () => {
    const { asked, authenticator } = countingAuthenticator();
    const app = await provider(authenticator);
    const raw = await rawFrameSocket(app.address!);
    try {
      const until = Date.now() + 600_000;
      for (let n = 0; n < 20_000; n++)
        raw.writer.event(EventName.Authenticate, 0, Buffer.from(token('x', until, n)));
      raw.writer.event(EventName.Authenticate, 0, Buffer.from(token('last', until)));
      raw.request(1, Who.name, 'whoami', []);
      const seen = await raw.until((frame) => frame.requestId === 1 && frame.kind === FrameKind.Response);
      expect(msgpack.decode(seen.at(-1)!.body)).toMatchObject({ id: 'last' });
      expect(seen.filter((frame) => frame.kind === FrameKind.Event)).toHaveLength(1);
      expect(asked).toHaveLength(1);
    } finally {
      raw.close();
    }
  });

  it('keeps at most MAX_PRESENTED_TOKENS tokens, each with what it proved', () => {
    const credentials = createConnectionCredentials();
    const identity: CallerIdentity = { id: 'a', via: 'test' };
    credentials.present('a');
    credentials.current!.remember('S', 'm', identity);
    credentials.present('b');
    credentials.present('a');
    expect(credentials.current!.known('S', 'm')).toBe(identity);
    for (let n = 0; n < MAX_PRESENTED_TOKENS; n++) credentials.present(`other-${n}`);
    credentials.present('a');
    expect(credentials.current!.known('S', 'm')).toBeUndefined();
    credentials.current!.remember('S', 'm', { id: 'a', via: 'test', validUntilMs: Date.now() - 1 });
    expect(credentials.current!.known('S', 'm')).toBeUndefined();
  });
});
