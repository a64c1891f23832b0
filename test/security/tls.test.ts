/**
 * The `tls` transport over real TLS sockets, with certificates made by openssl for this run
 * (test/security/pki.ts): a provider with server.tls serves TLS only and says so in its record, a
 * consumer with consumer.tls finds it through the registry; mutual TLS; every bad certificate refused
 * with its reason; plaintext and TLS meeting on one port fail fast and clearly, and the provider keeps
 * serving; certificates reloaded from their files without dropping connections.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type AppOptions, defineService, RpcError } from '../../src/index.js';
import { createTlsTransport } from '../../src/transport/tls.js';
import {
  DEFAULT_CLIENT_TLS_CONFIG,
  DEFAULT_SERVER_TLS_CONFIG,
  resolveClientTls,
  resolveServerTls,
} from '../../src/transport/tls-options.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { makePki, type Pki } from './pki.js';

const Echo = defineService<{ echo(text: string): Promise<string> }>('test.TlsEcho', {
  methods: { echo: {} },
});

let pki: Pki;
let registryDir: string;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
afterEach(async () => {
  await closeAll();
  if (registryDir) fs.rmSync(registryDir, { recursive: true, force: true });
});

const fast: AppOptions = { consumer: { retries: 0, connectTimeoutMs: 5_000, snapshotDir: '' } };

async function tlsProvider(server: NonNullable<AppOptions['server']>['tls'] = {}, extra: AppOptions = {}) {
  const provider = await testApp({
    ...extra,
    server: { tls: { key: pki.server.key, cert: pki.server.cert, ...server }, ...extra.server },
  });
  provider.provide(Echo, { echo: (text) => `tls:${text}` });
  await provider.start();
  return provider;
}

async function failure(call: Promise<unknown>): Promise<RpcError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RpcError.is(error)).toBe(true);
  return error as RpcError;
}

describe('TLS provider and consumer', () => {
  it('finds a TLS provider through the registry and calls it over TLS (its record says tls)', async () => {
    registryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-tls-registry-'));
    const registry = [`file://${registryDir}`];
    const provider = await tlsProvider({}, { registry });
    expect(provider.address).toMatch(/^tls:\/\/127\.0\.0\.1:\d+$/);
    const [record] = appInternals(provider).provider.records();
    expect(record).toMatchObject({ tls: true, transport: 'tls' });
    const consumer = await testApp({
      ...fast,
      registry,
      consumer: { ...fast.consumer, tls: { ca: pki.ca } },
    });
    expect(await consumer.refer(Echo).echo('a')).toBe('tls:a');
  });

  it('takes PEM text as well as file paths, and tls:// direct addresses', async () => {
    const provider = await tlsProvider({
      key: fs.readFileSync(pki.server.key, 'utf8'),
      cert: fs.readFileSync(pki.server.cert, 'utf8'),
    });
    const consumer = await testApp({
      ...fast,
      consumer: { ...fast.consumer, tls: { ca: fs.readFileSync(pki.ca, 'utf8') } },
    });
    expect(await consumer.refer(Echo, { url: provider.address! }).echo('b')).toBe('tls:b');
  });

  it('carries bodies over 64 KiB both ways (sent as they are, right after their header, corked)', async () => {
    const provider = await tlsProvider();
    const consumer = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
    const echo = consumer.refer(Echo, { url: provider.address! });
    const texts = [70_000, 1 << 20].map((length, i) => String.fromCharCode(97 + i).repeat(length));
    const answers = await Promise.all([...texts, ...texts].map((text) => echo.echo(text)));
    expect(answers).toEqual([...texts, ...texts].map((text) => `tls:${text}`));
  });

  it('refuses an expired provider certificate, a wrong CA and a wrong host name, each saying why', async () => {
    const expired = await tlsProvider({ key: pki.expiredServer.key, cert: pki.expiredServer.cert });
    const wrongHost = await tlsProvider({ key: pki.wrongHostServer.key, cert: pki.wrongHostServer.cert });
    const good = await tlsProvider();
    const trusting = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
    const otherCa = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.otherCa } } });

    const e1 = await failure(trusting.refer(Echo, { url: expired.address! }).echo('x'));
    expect(e1.code).toBe('Network');
    expect(e1.message).toMatch(/certificate has expired/);
    const e2 = await failure(otherCa.refer(Echo, { url: good.address! }).echo('x'));
    expect(e2.code).toBe('Network');
    expect(e2.message).toMatch(/not signed by a CA in consumer\.tls\.ca|wrong CA/);
    const e3 = await failure(trusting.refer(Echo, { url: wrongHost.address! }).echo('x'));
    expect(e3.code).toBe('Network');
    expect(e3.message).toMatch(/not for this host name/);
    // nothing else stopped working
    expect(await trusting.refer(Echo, { url: good.address! }).echo('ok')).toBe('tls:ok');
  });

  it('checks the certificate against consumer.tls.servername when set', async () => {
    const elsewhere = await tlsProvider({ key: pki.wrongHostServer.key, cert: pki.wrongHostServer.cert });
    const named = await testApp({
      ...fast,
      consumer: { ...fast.consumer, tls: { ca: pki.ca, servername: 'elsewhere.example' } },
    });
    expect(await named.refer(Echo, { url: elsewhere.address! }).echo('n')).toBe('tls:n');
    const good = await tlsProvider();
    const error = await failure(named.refer(Echo, { url: good.address! }).echo('x'));
    expect(error.message).toMatch(/not for this host name/);
  });

  it('a consumer without TLS configuration refuses a TLS-only provider at once, saying what to set', async () => {
    registryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-tls-registry-'));
    const registry = [`file://${registryDir}`];
    await tlsProvider({}, { registry });
    const plain = await testApp({ ...fast, registry });
    const started = Date.now();
    const error = await failure(plain.refer(Echo).echo('x'));
    expect(Date.now() - started).toBeLessThan(2_000); // no hang until a timeout
    expect(error.message).toMatch(/serves TLS only .*consumer\.tls\.ca/);
  });

  it('a TLS consumer never falls back to plaintext: a plaintext provider fails fast and keeps serving', async () => {
    const plainProvider = await testApp();
    plainProvider.provide(Echo, { echo: (text) => `plain:${text}` });
    await plainProvider.start();
    const tlsConsumer = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
    const started = Date.now();
    const error = await failure(tlsConsumer.refer(Echo, { url: plainProvider.address! }).echo('x'));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.code).toBe('Network');
    expect(error.message).toMatch(/TLS handshake with tls:\/\/127\.0\.0\.1:\d+ failed/);
    expect(error.message).toMatch(/plaintext/);
    const plainConsumer = await testApp(fast);
    expect(await plainConsumer.refer(Echo, { url: plainProvider.address! }).echo('y')).toBe('plain:y');
  });

  it('a plaintext consumer on a TLS port fails fast and clearly; the provider keeps serving TLS', async () => {
    const provider = await tlsProvider();
    const port = provider.port!;
    const plainConsumer = await testApp(fast);
    const started = Date.now();
    const error = await failure(plainConsumer.refer(Echo, { url: `127.0.0.1:${port}` }).echo('x'));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.code).toBe('Network');
    expect(error.message).toMatch(/TLS/);
    const tlsConsumer = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
    expect(await tlsConsumer.refer(Echo, { url: provider.address! }).echo('y')).toBe('tls:y');
  });
});

describe('mutual TLS', () => {
  const mtls = () => ({ ca: pki.ca, requestCert: true });

  it('serves a client with a certificate from its CA, and refuses one without or from another CA', async () => {
    const provider = await tlsProvider(mtls());
    const url = provider.address!;
    const orders = await testApp({
      ...fast,
      consumer: { ...fast.consumer, tls: { ca: pki.ca, cert: pki.orders.cert, key: pki.orders.key } },
    });
    expect(await orders.refer(Echo, { url }).echo('m')).toBe('tls:m');

    const anonymous = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
    const e1 = await failure(anonymous.refer(Echo, { url }).echo('x'));
    expect(e1.code).toBe('Network');
    expect(e1.message).toMatch(/certificate required|refused our client certificate/i);

    const intruder = await testApp({
      ...fast,
      consumer: { ...fast.consumer, tls: { ca: pki.ca, cert: pki.intruder.cert, key: pki.intruder.key } },
    });
    const e2 = await failure(intruder.refer(Echo, { url }).echo('x'));
    expect(e2.code).toBe('Network');
    expect(e2.message).toMatch(
      /unknown ca|does not trust our client certificate|refused our client certificate/i,
    );

    expect(await orders.refer(Echo, { url }).echo('still')).toBe('tls:still');
  });
});

describe('certificate reload', () => {
  it('loads new certificate files for new connections and keeps the open ones', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-tls-reload-'));
    const key = path.join(dir, 'server.key');
    const cert = path.join(dir, 'server.pem');
    fs.copyFileSync(pki.server.key, key);
    fs.copyFileSync(pki.server.cert, cert);
    try {
      const provider = await tlsProvider({ key, cert, reloadIntervalMs: 50 });
      const consumer = await testApp({ ...fast, consumer: { ...fast.consumer, tls: { ca: pki.ca } } });
      const echo = consumer.refer(Echo, { url: provider.address! });
      expect(await echo.echo('before')).toBe('tls:before');
      const pool = appInternals(consumer).consumer.pool;
      const [connection] = pool.connections();
      const serial = () =>
        new Promise<string>((resolve, reject) => {
          const socket = tls.connect({
            host: '127.0.0.1',
            port: provider.port!,
            ca: fs.readFileSync(pki.ca),
          });
          socket.once('secureConnect', () => {
            resolve(socket.getPeerCertificate().serialNumber);
            socket.destroy();
          });
          socket.once('error', reject);
        });
      const before = await serial();
      const rotated = pki.issueServer('rotated');
      fs.copyFileSync(rotated.key, `${key}.tmp`);
      fs.copyFileSync(rotated.cert, `${cert}.tmp`);
      fs.renameSync(`${key}.tmp`, key);
      fs.renameSync(`${cert}.tmp`, cert);
      await waitFor(async () => (await serial()) !== before, 10_000, {
        message: 'certificate never reloaded',
      });
      // the consumer's connection was not dropped
      expect(await echo.echo('after')).toBe('tls:after');
      expect(pool.connections()).toEqual([connection]);
      expect(appInternals(provider).provider.server!.connectionCount).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('client certificate reload (the transport itself)', () => {
  it('a consumer re-reads its certificate files before a new connection once they changed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-tls-client-reload-'));
    const key = path.join(dir, 'client.key');
    const cert = path.join(dir, 'client.pem');
    fs.copyFileSync(pki.orders.key, key);
    fs.copyFileSync(pki.orders.cert, cert);
    const transport = createTlsTransport({
      server: resolveServerTls({
        ...DEFAULT_SERVER_TLS_CONFIG,
        key: pki.server.key,
        cert: pki.server.cert,
        ca: pki.ca,
        requestCert: true,
      }),
      client: resolveClientTls({ ...DEFAULT_CLIENT_TLS_CONFIG, ca: pki.ca, cert, key, reloadIntervalMs: 1 }),
    });
    const seen: string[] = [];
    const listener = await transport.listen({ host: '127.0.0.1', port: 0 }, (stream) => {
      seen.push(stream.peerCertificate?.commonName ?? '?');
      stream.destroy();
    });
    const connectOnce = () =>
      new Promise<void>((resolve) => {
        const stream = transport.connect({ host: '127.0.0.1', port: listener.port });
        stream.on('error', () => {});
        stream.once('close', () => resolve());
      });
    try {
      await connectOnce();
      fs.copyFileSync(pki.billing.key, `${key}.tmp`);
      fs.copyFileSync(pki.billing.cert, `${cert}.tmp`);
      fs.renameSync(`${key}.tmp`, key);
      fs.renameSync(`${cert}.tmp`, cert);
      await waitFor(
        async () => {
          await connectOnce();
          return seen.at(-1) === 'billing';
        },
        10_000,
        { message: 'client certificate never reloaded' },
      );
      expect(seen[0]).toBe('orders');
    } finally {
      await listener.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('configuration mistakes fail when the app is built', () => {
  it.each([
    [{ server: { tls: { key: 'K' } } }, /server\.tls\.cert/],
    [
      { server: { tls: { cert: '/nonexistent/cert.pem', key: '/nonexistent/key.pem' } } },
      /server\.tls\.key.*readable file/,
    ],
    [{ server: { tls: { requestCert: true } } }, /server\.tls\.key/],
    [{ server: { transport: 'tls' as const } }, /server\.tls\.key and server\.tls\.cert/],
    [{ consumer: { tls: { cert: '/nonexistent/c.pem' } } }, /consumer\.tls\.key/],
    [
      { server: { auth: { mtls: true, defaultAccess: 'allow' as const } } },
      /server\.auth\.mtls.*requestCert/,
    ],
  ])('%j', async (options, message) => {
    await expect(testApp(options as AppOptions)).rejects.toThrow(message);
  });

  it('a key that is not the certificate’s', async () => {
    await expect(
      testApp({ server: { tls: { key: pki.orders.key, cert: pki.server.cert } } }),
    ).rejects.toThrow(/server\.tls\.cert.*private key of server\.tls\.cert/);
  });
});
