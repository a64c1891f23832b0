/**
 * Authentication, access rules and the access log over real sockets: shared-secret tokens, signed
 * tokens (JWT, HMAC and asymmetric, via jose), the client certificate of a mutual-TLS connection, and
 * every bad credential refused with `Unauthorized` and its reason while the handler never runs, the
 * credentials appear in no error, log line or diagnostics message, and the connection keeps serving.
 */
import crypto from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AppOptions,
  authFilter,
  type CallerIdentity,
  CHANNEL_NAMES,
  callContext,
  credentialsFilter,
  defineService,
  jwtAuthenticator,
  type Logger,
  RpcError,
  tokenAuthenticator,
  withOptions,
} from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { makePki, type Pki } from './pki.js';

interface Whoami {
  whoami(): Promise<{ id: string; via: string; sawCredentials: boolean } | null>;
  admin(): Promise<string>;
}
const Who = defineService<Whoami>('test.Whoami', { methods: { whoami: {}, admin: {} } });
const Other = defineService<{ ping(): Promise<string> }>('test.Other', { methods: { ping: {} } });

const ORDERS_TOKEN = 'orders-0123456789abcdef-secret';
const BILLING_TOKEN = 'billing-0123456789abcdef-secret';
const JWT_SECRET = 'jwt-hmac-secret-0123456789abcdef0123456789';

afterEach(closeAll);

/** Every line logged, and a logger that keeps them. */
function capture(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

let runs = 0;
async function provider(options: AppOptions) {
  const app = await testApp(options);
  app.provide(Who, {
    whoami() {
      runs++;
      const context = callContext()!;
      const identity: CallerIdentity | undefined = context.identity;
      return identity
        ? { id: identity.id, via: identity.via, sawCredentials: 'authorization' in context.attachments }
        : null;
    },
    admin() {
      runs++;
      return 'admin done';
    },
  });
  await app.start();
  return app;
}

const consumerOptions = (extra: AppOptions = {}): AppOptions => ({
  ...extra,
  consumer: { retries: 0, snapshotDir: '', ...extra.consumer },
});

async function refusal(call: Promise<unknown>): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RpcError.is(error)).toBe(true);
  expect((error as RpcError).code).toBe('Unauthorized');
  return error as RpcError;
}

const tokenAuth = {
  auth: { tokens: { orders: ORDERS_TOKEN, billing: BILLING_TOKEN }, defaultAccess: 'allow' as const },
};

describe('shared-secret tokens', () => {
  it('identifies the caller by its token; the handler sees the identity and not the token', async () => {
    const app = await provider({ server: tokenAuth });
    const consumer = await testApp(consumerOptions({ consumer: { credentials: ORDERS_TOKEN } }));
    const who = consumer.refer(Who, { url: app.address! });
    expect(await who.whoami()).toEqual({ id: 'orders', via: 'token', sawCredentials: false });
    // per call, over the app's
    expect(await withOptions(who, { credentials: BILLING_TOKEN }).whoami()).toMatchObject({ id: 'billing' });
    // per reference (a filter), over the app's
    const asBilling = consumer.refer(Who, { url: app.address!, filters: [credentialsFilter(BILLING_TOKEN)] });
    expect(await asBilling.whoami()).toMatchObject({ id: 'billing' });
    expect(await withOptions(asBilling, { credentials: ORDERS_TOKEN }).whoami()).toMatchObject({
      id: 'orders',
    });
  });

  it('refuses a call without credentials or with a wrong token; the handler never runs; the connection keeps serving', async () => {
    const { lines, logger } = capture();
    const app = await provider({ server: tokenAuth, logger });
    const consumer = await testApp(consumerOptions({ logger }));
    const who = consumer.refer(Who, { url: app.address! });
    const messages: unknown[] = [];
    const listen = (message: unknown) => messages.push(message);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.serverCall, listen);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.clientCall, listen);
    try {
      const before = runs;
      const e1 = await refusal(who.whoami());
      expect(e1.message).toMatch(/credentials required/);
      const garbage = ['x', `${ORDERS_TOKEN}x`, ORDERS_TOKEN.slice(0, -1), '\u0000'.repeat(40), 'a.b.c'];
      for (const token of garbage) {
        const error = await refusal(withOptions(who, { credentials: token }).whoami());
        expect(error.message).toMatch(/credentials not accepted|malformed/);
        expect(error.message).not.toContain(token === 'x' ? 'never' : token);
      }
      expect(runs).toBe(before); // not one handler ran
      expect(await withOptions(who, { credentials: ORDERS_TOKEN }).whoami()).toMatchObject({ id: 'orders' });
      const everything = JSON.stringify([lines, messages]);
      for (const secret of [ORDERS_TOKEN, BILLING_TOKEN, ORDERS_TOKEN.slice(0, -1)]) {
        expect(everything).not.toContain(secret);
      }
      expect(lines.some((line) => /refused test\.Whoami\.whoami: credentials required/.test(line))).toBe(
        true,
      );
    } finally {
      diagnosticsChannel.unsubscribe(CHANNEL_NAMES.serverCall, listen);
      diagnosticsChannel.unsubscribe(CHANNEL_NAMES.clientCall, listen);
    }
  });

  it('guards one service when given as its filter, leaving the app’s others open', async () => {
    const app = await testApp({});
    app.provide(
      Who,
      { whoami: () => null, admin: () => 'admin done' },
      {
        filters: [authFilter({ authenticators: [tokenAuthenticator({ ops: ORDERS_TOKEN })] })],
      },
    );
    app.provide(Other, { ping: () => 'pong' });
    await app.start();
    const consumer = await testApp(consumerOptions());
    expect(await consumer.refer(Other, { url: app.address! }).ping()).toBe('pong');
    await refusal(consumer.refer(Who, { url: app.address! }).admin());
    const authed = consumer.refer(Who, { url: app.address!, filters: [credentialsFilter(ORDERS_TOKEN)] });
    expect(await authed.admin()).toBe('admin done');
  });
});

describe('signed tokens (JWT)', () => {
  const hmac = new TextEncoder().encode(JWT_SECRET);
  const sign = (
    claims: { sub?: string; aud?: string; exp?: number; nbf?: number },
    key: Uint8Array | crypto.KeyObject = hmac,
    alg = 'HS256',
  ) => {
    let jwt = new SignJWT(claims.sub === undefined ? {} : { sub: claims.sub }).setProtectedHeader({ alg });
    if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    if (claims.nbf !== undefined) jwt = jwt.setNotBefore(claims.nbf);
    return jwt.sign(key);
  };
  const now = () => Math.floor(Date.now() / 1000);
  const jwtServer = { auth: { jwtSecret: JWT_SECRET, defaultAccess: 'allow' as const } };

  it('accepts a token for this service and refuses expired, future, foreign, forged, malformed and claim-less ones', async () => {
    const { lines, logger } = capture();
    const app = await provider({ server: jwtServer, logger });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    const good = await sign({ sub: 'orders', aud: 'test.Whoami', exp: now() + 600 });
    expect(await withOptions(who, { credentials: good }).whoami()).toEqual({
      id: 'orders',
      via: 'jwt',
      sawCredentials: false,
    });
    const before = runs;
    const cases: Array<[string, string | Promise<string>, RegExp]> = [
      ['expired', sign({ sub: 'orders', aud: 'test.Whoami', exp: now() - 60 }), /token expired/],
      [
        'future',
        sign({ sub: 'orders', aud: 'test.Whoami', exp: now() + 600, nbf: now() + 300 }),
        /not valid yet/,
      ],
      ['another service', sign({ sub: 'orders', aud: 'test.Other', exp: now() + 600 }), /another audience/],
      [
        'forged',
        sign(
          { sub: 'orders', aud: 'test.Whoami', exp: now() + 600 },
          new TextEncoder().encode(`${JWT_SECRET}x`),
        ),
        /signature does not verify/,
      ],
      ['no expiry', sign({ sub: 'orders', aud: 'test.Whoami' }), /no exp claim/],
      ['no subject', sign({ aud: 'test.Whoami', exp: now() + 600 }), /no sub claim/],
      ['malformed', 'bm90IGpzb24.bm90IGpzb24.c2ln', /malformed token/],
      ['garbage', 'not-a-token-at-all-0123456789', /credentials not accepted/],
    ];
    for (const [name, token, reason] of cases) {
      const credentials = await token;
      const error = await refusal(withOptions(who, { credentials }).whoami());
      expect(error.message, name).toMatch(reason);
      expect(error.message, name).not.toContain(credentials);
      expect(lines.join('\n'), name).not.toContain(credentials);
    }
    expect(runs).toBe(before);
    expect(await withOptions(who, { credentials: good }).whoami()).toMatchObject({ id: 'orders' });
  });

  it('refuses a token replayed after its expiry, though it was accepted (and kept) before', async () => {
    const app = await provider({ server: jwtServer });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    const shortLived = await sign({ sub: 'orders', aud: 'test.Whoami', exp: now() + 2 });
    expect(await withOptions(who, { credentials: shortLived }).whoami()).toMatchObject({ id: 'orders' });
    const error = await waitFor(
      () =>
        withOptions(who, { credentials: shortLived })
          .whoami()
          .then(
            () => undefined,
            (caught: RpcError) => caught,
          ),
      5_000,
      { message: 'an expired token kept working' },
    );
    expect(error.code).toBe('Unauthorized');
    expect(error.message).toMatch(/token expired/);
  });

  it('with server.auth.jwtMaxLifetime, refuses a token that lives longer (exp in 9999 too)', async () => {
    const app = await provider({
      server: { auth: { jwtSecret: JWT_SECRET, defaultAccess: 'allow', jwtMaxLifetime: '1h' } },
    });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    const hmacKey = new TextEncoder().encode(JWT_SECRET);
    const token = (claims: { iat?: number; exp: number }) => {
      let jwt = new SignJWT({ sub: 'orders' })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience('test.Whoami');
      if (claims.iat !== undefined) jwt = jwt.setIssuedAt(claims.iat);
      return jwt.setExpirationTime(claims.exp).sign(hmacKey);
    };
    const forever = await token({ exp: Date.UTC(9999, 0, 1) / 1000 });
    expect((await refusal(withOptions(who, { credentials: forever }).whoami())).message).toMatch(
      /token lives longer than 3600000 ms \(exp - now; server.auth.jwtMaxLifetime\)/,
    );
    const longIat = await token({ iat: now() - 60, exp: now() + 7_200 });
    expect((await refusal(withOptions(who, { credentials: longIat }).whoami())).message).toMatch(/exp - iat/);
    const fine = await token({ iat: now(), exp: now() + 1_800 });
    expect(await withOptions(who, { credentials: fine }).whoami()).toMatchObject({ id: 'orders' });
    const fineNoIat = await token({ exp: now() + 1_800 });
    expect(await withOptions(who, { credentials: fineNoIat }).whoami()).toMatchObject({ id: 'orders' });
  });

  it('verifies asymmetric tokens with a public key (ES256)', async () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const app = await provider({ server: { auth: { jwtPublicKey: pem, defaultAccess: 'allow' } } });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    const token = await sign({ sub: 'billing', aud: 'test.Whoami', exp: now() + 600 }, privateKey, 'ES256');
    expect(await withOptions(who, { credentials: token }).whoami()).toMatchObject({
      id: 'billing',
      via: 'jwt',
    });
    // an HMAC token made with the public key as its secret (algorithm confusion) is refused
    const confused = await sign(
      { sub: 'billing', aud: 'test.Whoami', exp: now() + 600 },
      new TextEncoder().encode(pem),
    );
    await refusal(withOptions(who, { credentials: confused }).whoami());
  });
});

describe('a flood of forged signed tokens', () => {
  it('checks at most maxPending signatures at once; the rest are refused Overloaded before any work', async () => {
    const secret = new TextEncoder().encode(JWT_SECRET);
    const app = await testApp({});
    app.provide(
      Who,
      { whoami: () => null, admin: () => 'admin done' },
      {
        filters: [
          authFilter({
            authenticators: [
              jwtAuthenticator({ secret: JWT_SECRET, maxPending: 2, maxPendingPerAddress: 2 }),
            ],
          }),
        ],
      },
    );
    await app.start();
    const consumer = await testApp(consumerOptions());
    // adaptive throttling off: after ~40 Overloaded refusals it would refuse the good call below
    // locally (test/overload/adaptive-throttling.test.ts); this test is about the provider's checks
    const who = consumer.refer(Who, { url: app.address!, adaptiveThrottling: false });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const forged = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        new SignJWT({ sub: `x${i}` })
          .setProtectedHeader({ alg: 'HS256' })
          .setAudience('test.Whoami')
          .setExpirationTime(exp)
          .sign(new TextEncoder().encode(`${JWT_SECRET}-forged`)),
      ),
    );
    const codes = await Promise.all(
      forged.map((credentials) =>
        withOptions(who, { credentials })
          .admin()
          .then(
            () => 'OK',
            (error: RpcError) => error.code,
          ),
      ),
    );
    expect(codes).not.toContain('OK');
    expect(codes.filter((code) => code === 'Unauthorized').length).toBeGreaterThanOrEqual(2);
    expect(codes.filter((code) => code === 'Overloaded').length).toBeGreaterThan(0);
    const good = await new SignJWT({ sub: 'orders' })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('test.Whoami')
      .setExpirationTime(exp)
      .sign(secret);
    expect(await withOptions(who, { credentials: good }).admin()).toBe('admin done');
  });
});

describe('a flood of forged signed tokens from one address', () => {
  it('takes at most its address share of the signature checks: fresh tokens from another address still verify', async () => {
    const authenticator = jwtAuthenticator({ secret: JWT_SECRET });
    const exp = Math.floor(Date.now() / 1000) + 600;
    const sign = (sub: string, secret: string) =>
      new SignJWT({ sub })
        .setProtectedHeader({ alg: 'HS256' })
        .setAudience('test.Whoami')
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(secret));
    const forged = await Promise.all(
      Array.from({ length: 300 }, (_, i) => sign(`x${i}`, `${JWT_SECRET}-forged`)),
    );
    const outcome = (call: () => unknown): Promise<string> =>
      Promise.resolve()
        .then(call)
        .then(
          (identity) => `ok ${(identity as CallerIdentity).id}`,
          (error: Error) => (RpcError.is(error) ? error.code : 'Unauthorized'),
        );
    const ask = (credentials: string, remoteAddress: string) => () =>
      authenticator.authenticate({
        credentials,
        service: 'test.Whoami',
        method: 'admin',
        remoteAddress,
        peer: undefined,
      });
    // 300 forged tokens at once from 127.0.0.2, on connections of their own (other ports)
    const flood = forged.map((token, i) => outcome(ask(token, `127.0.0.2:${40_000 + i}`)));
    // fresh, valid tokens from 127.0.0.1 meanwhile
    const fresh = await Promise.all(
      Array.from({ length: 20 }, async (_, i) =>
        outcome(ask(await sign(`good${i}`, JWT_SECRET), '127.0.0.1:5000')),
      ),
    );
    const floodCodes = await Promise.all(flood);
    expect(fresh).toEqual(Array.from({ length: 20 }, (_, i) => `ok good${i}`));
    // the flooding address got its share (256 / 8) of checks at once; the rest was refused before any work
    expect(floodCodes.filter((code) => code === 'Overloaded').length).toBeGreaterThanOrEqual(300 - 32);
    expect(floodCodes).not.toContain('ok');
  });
});

describe('access rules', () => {
  it('deny beats allow, an allow list admits only whom it names, the default decides the rest', async () => {
    const app = await provider({
      server: {
        auth: {
          tokens: { orders: ORDERS_TOKEN, billing: BILLING_TOKEN },
          defaultAccess: 'allow',
          rules: [
            { service: 'test.Whoami', method: 'admin', allow: ['ops'] },
            { service: 'test.Whoami', deny: ['billing'] },
          ],
        },
      },
    });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    const as = (token: string) => withOptions(who, { credentials: token });
    const before = runs;
    expect((await refusal(as(ORDERS_TOKEN).admin())).message).toMatch(/"orders" is not allowed/);
    expect((await refusal(as(BILLING_TOKEN).whoami())).message).toMatch(/"billing" is not allowed/);
    expect(runs).toBe(before);
    expect(await as(ORDERS_TOKEN).whoami()).toMatchObject({ id: 'orders' });
  });

  it('the most specific allow list decides: a method rule narrows its service rule', async () => {
    const app = await provider({
      server: {
        auth: {
          tokens: { orders: ORDERS_TOKEN, ops: BILLING_TOKEN },
          defaultAccess: 'deny',
          rules: [
            { service: 'test.Whoami', allow: ['orders', 'ops'] },
            { service: 'test.Whoami', method: 'admin', allow: ['ops'] },
          ],
        },
      },
    });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    expect(await withOptions(who, { credentials: ORDERS_TOKEN }).whoami()).toMatchObject({ id: 'orders' });
    await refusal(withOptions(who, { credentials: ORDERS_TOKEN }).admin());
    expect(await withOptions(who, { credentials: BILLING_TOKEN }).admin()).toBe('admin done');
  });

  it("with defaultAccess 'deny', only what a rule allows", async () => {
    const app = await provider({
      server: {
        auth: {
          tokens: { orders: ORDERS_TOKEN, billing: BILLING_TOKEN },
          defaultAccess: 'deny',
          rules: [{ service: 'test.Whoami', method: 'whoami', allow: ['orders'] }],
        },
      },
    });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    expect(await withOptions(who, { credentials: ORDERS_TOKEN }).whoami()).toMatchObject({ id: 'orders' });
    await refusal(withOptions(who, { credentials: ORDERS_TOKEN }).admin());
    await refusal(withOptions(who, { credentials: BILLING_TOKEN }).whoami());
  });

  it.each([
    [{ auth: { tokens: { orders: ORDERS_TOKEN } } }, /server\.auth\.defaultAccess/],
    [
      { auth: { tokens: { orders: 'short' }, defaultAccess: 'allow' } },
      /server\.auth\.tokens\.orders.*at least 16/,
    ],
    [{ auth: { rules: [{ deny: ['x'] }] } }, /server\.auth\.rules.*authentication configured/],
    [{ auth: { jwtSecret: 'short', defaultAccess: 'allow' } }, /server\.auth\.jwtSecret.*32 bytes/],
    [{ auth: { jwtPublicKey: '/nonexistent.pem', defaultAccess: 'allow' } }, /server\.auth\.jwtPublicKey/],
  ])('configuration mistake %j fails when the app is built', async (server, message) => {
    await expect(testApp({ server } as AppOptions)).rejects.toThrow(message);
    await expect(testApp({ server } as AppOptions)).rejects.not.toThrow(/short/);
  });
});

describe('mutual TLS identity', () => {
  let pki: Pki;
  beforeAll(() => {
    pki = makePki();
  });
  afterAll(() => pki.remove());

  it('takes the caller from its client certificate, and access rules apply to it', async () => {
    const app = await provider({
      server: {
        tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true },
        auth: { mtls: true, defaultAccess: 'deny', rules: [{ service: 'test.Whoami', allow: ['orders'] }] },
      },
    });
    const client = (pair: { key: string; cert: string }) =>
      testApp(consumerOptions({ consumer: { tls: { ca: pki.ca, ...pair } } }));
    const orders = (await client(pki.orders)).refer(Who, { url: app.address! });
    expect(await orders.whoami()).toEqual({ id: 'orders', via: 'mtls', sawCredentials: false });
    const billing = (await client(pki.billing)).refer(Who, { url: app.address! });
    expect((await refusal(billing.whoami())).message).toMatch(/"billing" is not allowed/);
    expect(await orders.admin()).toBe('admin done');
  });

  it('with rejectUnauthorized off at the handshake, a certificate from another CA is still no identity', async () => {
    const app = await provider({
      server: {
        tls: {
          key: pki.server.key,
          cert: pki.server.cert,
          ca: pki.ca,
          requestCert: true,
          rejectUnauthorized: false,
        },
        auth: { mtls: true, defaultAccess: 'allow' },
      },
    });
    const intruder = await testApp(consumerOptions({ consumer: { tls: { ca: pki.ca, ...pki.intruder } } }));
    const before = runs;
    const error = await refusal(intruder.refer(Who, { url: app.address! }).whoami());
    expect(error.message).toMatch(/client certificate not trusted/);
    expect(runs).toBe(before);
    const anonymous = await testApp(consumerOptions({ consumer: { tls: { ca: pki.ca } } }));
    expect((await refusal(anonymous.refer(Who, { url: app.address! }).whoami())).message).toMatch(
      /credentials required/,
    );
    const orders = await testApp(consumerOptions({ consumer: { tls: { ca: pki.ca, ...pki.orders } } }));
    expect(await orders.refer(Who, { url: app.address! }).whoami()).toMatchObject({ id: 'orders' });
  });
});

describe('access log', () => {
  it('logs one line per call with caller, method, outcome and duration, refusals included, never credentials', async () => {
    const { lines, logger } = capture();
    const app = await provider({ server: { ...tokenAuth, accessLog: ['test.Whoami'] }, logger });
    app.provide(Other, { ping: () => 'pong' });
    const consumer = await testApp(consumerOptions());
    const who = consumer.refer(Who, { url: app.address! });
    await withOptions(who, { credentials: ORDERS_TOKEN }).whoami();
    await refusal(withOptions(who, { credentials: 'wrong-token-0123456789' }).whoami());
    const access = lines.filter((line) => line.startsWith('access '));
    expect(access).toHaveLength(2);
    expect(access[0]).toMatch(
      /^access test\.Whoami\.whoami caller=orders\(token\) from=127\.0\.0\.1:\d+ outcome=OK \d+\.\d\dms$/,
    );
    expect(access[1]).toMatch(
      /^access test\.Whoami\.whoami caller=- from=127\.0\.0\.1:\d+ outcome=Unauthorized /,
    );
    expect(lines.join('\n')).not.toMatch(/wrong-token|orders-0123/);
  });
});
