/**
 * The admin endpoints over HTTP on their own port: every endpoint as JSON and as HTML, the bearer
 * token, readiness through a graceful stop (false before the provider unregisters), the configuration
 * with the source of each value, the services with their providers' state, and the provider record's
 * `admin` address.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CallistoApp } from '../../src/index.js';
import type { Registry } from '../../src/registry/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { request } from '../hostile/support/http-peers.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus, sampleValue } from '../support/prometheus-text.js';
import { waitFor } from '../support/wait-for.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-admin-'));
});
afterEach(async () => {
  await closeAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

const url = (app: CallistoApp, route: string) => `http://127.0.0.1:${app.adminPort}${route}`;

async function json(app: CallistoApp, route: string, headers: Record<string, string> = {}) {
  const response = await fetch(url(app, route), { headers });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}

describe('admin endpoints', () => {
  it('are off unless enabled', async () => {
    const app = await testApp();
    app.provide(UserServiceDef, new UserServiceImpl());
    await app.start();
    expect(app.adminPort).toBeUndefined();
  });

  it('serve health, readiness, metrics, services, config and stats as JSON, and HTML to a browser', async () => {
    const registry = `file://${dir}`;
    const provider = await testApp({
      application: 'users',
      registry,
      admin: { enabled: true },
      consumer: { timeoutMs: 1234 },
      load: { env: { CALLISTO_SHUTDOWN_TIMEOUT_MS: '4321' } },
    });
    provider.provide(UserServiceDef, new UserServiceImpl());
    provider.provide(FlakyDef, new FlakyImpl('p'));
    await provider.start();
    const consumer = await testApp({
      application: 'front',
      registry,
      admin: { enabled: true },
      consumer: { warmupMs: 0 },
    });
    await consumer.start();
    const users = consumer.refer(UserServiceDef);
    await users.say('hello');

    const health = await json(provider, '/health');
    expect(health).toMatchObject({ status: 200, body: { status: 'ok', state: 'running' } });
    expect(health.type).toContain('application/json');
    expect(await json(provider, '/ready')).toMatchObject({ status: 200, body: { ready: true } });

    const metrics = await fetch(url(provider, '/metrics'));
    const families = parsePrometheus(await metrics.text());
    expect(
      sampleValue(families, 'callisto_calls_total', { side: 'provider', method: 'say', code: 'OK' }),
    ).toBe(1);

    // the provider's services with their methods and declarations
    const provided = (await json(provider, '/services')).body as { services: Array<Record<string, unknown>> };
    const flaky = provided.services.find((s) => s.service === 'test.Flaky')!;
    expect(flaky).toMatchObject({ side: 'provider', version: '1.0.0', group: '', address: provider.address });
    expect(flaky.methods).toContainEqual({ name: 'read', idempotent: true, oneway: false, hasSchema: false });
    // who consumes it, as the registry lists them
    const userServiceProvided = provided.services.find((s) => s.service === 'test.UserService')!;
    expect(userServiceProvided.consumers).toEqual([
      expect.objectContaining({ application: 'front', pid: process.pid }),
    ]);
    // the consumer's: the providers it sees, with their state
    const consumed = (await json(consumer, '/services')).body as { services: Array<Record<string, unknown>> };
    const userService = consumed.services.find((s) => s.service === 'test.UserService')!;
    expect(userService.side).toBe('consumer');
    expect(userService.providers).toEqual([
      expect.objectContaining({ address: provider.address, state: 'healthy', weight: 100, inFlight: 0 }),
    ]);

    // every key with its value and where it came from
    const config = (await json(provider, '/config')).body as {
      keys: Array<{ key: string; value: unknown; source: string }>;
    };
    const key = (name: string) => config.keys.find((entry) => entry.key === name);
    expect(key('consumer.timeoutMs')).toEqual({
      key: 'consumer.timeoutMs',
      value: 1234,
      source: 'code, callisto() options',
    });
    expect(key('shutdownTimeoutMs')).toMatchObject({
      value: 4321,
      source: expect.stringContaining('CALLISTO_SHUTDOWN_TIMEOUT_MS'),
    });
    expect(key('server.maxConnections')).toMatchObject({ source: 'default' });

    const stats = (await json(provider, '/stats')).body as Record<string, unknown>;
    expect(stats).toMatchObject({ application: 'users', pid: process.pid });
    expect(stats.methods).toContainEqual(
      expect.objectContaining({ side: 'provider', method: 'say', calls: 1 }),
    );

    // a browser gets a page
    const page = await fetch(url(provider, '/services'), { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<table');
    expect(html).toContain('test.Flaky');

    expect((await json(provider, '/nothing')).status).toBe(404);
    expect((await fetch(url(provider, '/health'), { method: 'POST', body: 'x' })).status).toBe(405);

    // the record tells where the admin endpoints are
    const records = fs
      .readdirSync(dir, { recursive: true })
      .map(String)
      .filter((file) => file.endsWith('.json'))
      .map((file) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')));
    expect(records.length).toBeGreaterThan(0);
    for (const record of records.filter((r) => r.application === 'users'))
      expect(record.admin).toEqual({ host: '127.0.0.1', port: provider.adminPort });
  });

  it('are on when a port is given', async () => {
    const free = net.createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const port = (free.address() as net.AddressInfo).port;
    await new Promise((resolve) => free.close(resolve));
    const app = await testApp({ admin: { port } });
    await app.start();
    expect(app.adminPort).toBe(port);
    expect((await json(app, '/ready')).status).toBe(200);
  });

  it('answer 401 without the bearer token when one is set', async () => {
    const app = await testApp({ admin: { enabled: true, token: 's3cret' } });
    await app.start();
    const refused = await json(app, '/health');
    expect(refused).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect((await json(app, '/health', { authorization: 'Bearer wrong!' })).status).toBe(401);
    const metrics = await fetch(url(app, '/metrics'), { headers: { authorization: 'Bearer s3cret' } });
    expect(metrics.status).toBe(200);
    const config = (await json(app, '/config', { authorization: 'Bearer s3cret' })).body as {
      keys: Array<{ key: string; value: unknown }>;
    };
    // the token itself is never shown
    expect(config.keys.find((entry) => entry.key === 'admin.token')!.value).toBe('(hidden)');
  });

  it('never show a secret in /config: auth tokens, the JWT secret, consumer credentials, registry passwords', async () => {
    const app = await testApp({
      admin: { enabled: true },
      server: {
        auth: {
          tokens: { orders: 'orders-secret-token-0123456789' },
          jwtSecret: 'jwt-secret-0123456789abcdef0123456789',
          defaultAccess: 'allow',
        },
      },
      consumer: { credentials: 'consumer-credentials-0123456789' },
      registry: [`file://${dir}?password=registry-pw-0123456789`],
    });
    await app.start();
    const text = await (await fetch(url(app, '/config'))).text();
    for (const secret of ['orders-secret', 'jwt-secret', 'consumer-credentials', 'registry-pw']) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('(hidden)');
  });

  it('hold at most 64 connections: more are closed as they arrive', async () => {
    // every connection from 127.0.0.1 here: the per-address cap raised to see the cap in all
    const app = await testApp({ admin: { enabled: true, maxConnectionsPerAddress: 100 } });
    await app.start();
    const connect = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(app.adminPort!, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
      });
    /** Asks for /health on a new connection: its status line, or 'closed' when the server closed it. */
    const health = async () => {
      const socket = await connect();
      return new Promise<string>((resolve) => {
        socket.once('data', (data) => {
          resolve(String(data).split('\r\n')[0]!);
          socket.destroy();
        });
        socket.once('close', () => resolve('closed'));
        socket.write('GET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
      });
    };
    const held: net.Socket[] = [];
    try {
      for (let i = 0; i < 64; i++) held.push(await connect());
      // the server counts a connection once it accepted it: soon the next one is closed unanswered
      await waitFor(async () => (await health()) === 'closed');
      held.pop()!.destroy();
      await waitFor(async () => (await health()) === 'HTTP/1.1 200 OK');
    } finally {
      for (const socket of held) socket.destroy();
    }
  });

  it('say not ready from the start of a graceful stop, before the provider unregisters', async () => {
    const seenAtUnregister: number[] = [];
    let app: CallistoApp | undefined;
    const impl = new FlakyImpl('draining');
    impl.mode = 'hang';
    app = await testApp({
      registry: `file://${dir}`,
      admin: { enabled: true },
      shutdownTimeoutMs: 5_000,
      extend(extensions) {
        const file = extensions.get('registry', 'file');
        extensions.register('registry', 'file', async (address, options) => {
          const registry: Registry = await file(address, options);
          return {
            ...registry,
            kind: 'file',
            status: registry.status,
            onStatus: (listener) => registry.onStatus(listener),
            register: (record) => registry.register(record),
            subscribe: (key, listener) => registry.subscribe(key, listener),
            registerConsumer: (record) => registry.registerConsumer(record),
            unregisterConsumer: (record) => registry.unregisterConsumer(record),
            close: () => registry.close(),
            async unregister(record) {
              // what a load balancer polling /ready sees while the provider leaves the registry
              seenAtUnregister.push((await fetch(url(app!, '/ready'))).status);
              return registry.unregister(record);
            },
          };
        });
      },
    });
    app.provide(FlakyDef, impl);
    await app.start();
    const consumer = await testApp();
    const flaky = consumer.refer(FlakyDef, { url: app.address!, timeoutMs: 10_000 });
    const inFlight = flaky.write('x');
    await waitFor(() => impl.writes.length === 1);
    expect((await json(app, '/ready')).status).toBe(200);

    const closing = app.close();
    // draining: still alive, not ready, the call in flight still being served
    await waitFor(async () => (await json(app!, '/ready')).status === 503);
    expect((await json(app, '/ready')).body).toMatchObject({
      ready: false,
      state: 'stopping',
      reason: 'shutting down',
    });
    expect((await json(app, '/health')).status).toBe(200);
    expect(seenAtUnregister).toEqual([503]);
    impl.releaseAll();
    expect(await inFlight).toBe('draining:x');
    await closing;
    await expect(fetch(url(app, '/health'))).rejects.toThrow();
  });
});

describe('admin endpoints over TLS (admin.tls)', () => {
  let pki: Pki;
  beforeAll(() => {
    pki = makePki();
  });
  afterAll(() => pki.remove());

  it('serve HTTPS only with their own key and certificate (files or PEM text); half a pair is a ConfigError', async () => {
    const ca = fs.readFileSync(pki.ca, 'utf8');
    for (const tls of [
      { key: pki.server.key, cert: pki.server.cert },
      { key: fs.readFileSync(pki.server.key, 'utf8'), cert: fs.readFileSync(pki.server.cert, 'utf8') },
    ]) {
      const app = await testApp({ admin: { enabled: true, tls } });
      await app.start();
      const health = await request(`https://127.0.0.1:${app.adminPort}/health`, { ca });
      expect(health.status).toBe(200);
      expect(JSON.parse(health.text)).toMatchObject({ status: 'ok' });
      // plaintext is not served
      await expect(
        request(`http://127.0.0.1:${app.adminPort}/health`, { timeoutMs: 1_000 }),
      ).rejects.toThrow();
      await app.close();
    }
    const half = await testApp({ admin: { enabled: true, tls: { key: pki.server.key, cert: '' } } });
    await expect(half.start()).rejects.toThrow(/admin\.tls\.cert/);
    const mismatched = await testApp({
      admin: { enabled: true, tls: { key: pki.orders.key, cert: pki.server.cert } },
    });
    await expect(mismatched.start()).rejects.toThrow(
      /admin\.tls\.key must be the private key of admin\.tls\.cert/,
    );
  });

  it('reload their certificate when the files change (as server.tls does), without a restart', async () => {
    const cert = path.join(dir, 'admin.pem');
    const key = path.join(dir, 'admin.key');
    fs.copyFileSync(pki.server.cert, cert);
    fs.copyFileSync(pki.server.key, key);
    const app = await testApp({ admin: { enabled: true, tls: { key, cert } } });
    await app.start();
    /** The fingerprint of the certificate a new connection is served. */
    const served = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = tls.connect(
          { host: '127.0.0.1', port: app.adminPort!, rejectUnauthorized: false },
          () => {
            resolve(socket.getPeerCertificate().fingerprint256);
            socket.destroy();
          },
        );
        socket.once('error', reject);
      });
    const before = await served();
    const next = pki.issueServer('admin-rotated');
    fs.copyFileSync(next.key, key);
    fs.copyFileSync(next.cert, cert);
    // checked every 2 s (server.tls.reloadIntervalMs's default)
    const after = await waitFor(async () => {
      const now = await served();
      return now !== before ? now : undefined;
    }, 10_000);
    expect(after).not.toBe(before);
  });
});
