/**
 * The gRPC entry over TLS (h2 by ALPN, with server.tls's certificates) on the provider's own port, next
 * to Callisto's own TLS consumers; the auth filter reads the `authorization` metadata; a port of its
 * own with `server.grpc.port`; `server.grpc.enabled: false` serves no gRPC. Real sockets, grpc-js.
 */
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AppOptions } from '../../src/index.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { type GreeterClient, GreeterDef, greeterClient, greeterImpl, newSeen, unary } from './greeter.js';

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
const clients: GreeterClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

const TOKEN = 'orders-secret-token-0123456789';

async function provider(server: Record<string, unknown> = {}) {
  const app = await testApp({ server: server as AppOptions['server'] });
  app.provide(GreeterDef, greeterImpl(newSeen()));
  await app.start();
  return app;
}

function tlsClient(port: number): GreeterClient {
  const client = greeterClient(`localhost:${port}`, grpc.credentials.createSsl(fs.readFileSync(pki.ca)));
  clients.push(client);
  return client;
}

describe('gRPC entry: TLS, auth, ports', () => {
  it('serves gRPC over TLS (ALPN h2) on the provider port, beside Callisto consumers over TLS', async () => {
    const app = await provider({ tls: { key: pki.server.key, cert: pki.server.cert } });
    expect(app.grpcPort).toBe(app.port);
    const answer = await unary<{ message: string }>(tlsClient(app.grpcPort!), 'sayHello', { name: 'tls' });
    expect(answer.error).toBeUndefined();
    expect(answer.value).toEqual({ message: 'hello tls' });
    const consumer = await testApp({ consumer: { tls: { ca: pki.ca } } } as AppOptions);
    const greeter = consumer.refer(GreeterDef, { url: `tls://localhost:${app.port}` });
    expect(await greeter.sayHello('callisto')).toEqual({ message: 'hello callisto' });
    // a plaintext (h2c) client gets no gRPC from a TLS-only port
    const plain = greeterClient(`127.0.0.1:${app.port}`);
    clients.push(plain);
    const refused = await unary(plain, 'sayHello', { name: 'x' }, { deadline: new Date(Date.now() + 3_000) });
    expect(refused.error?.code).toBe(grpc.status.UNAVAILABLE);
  });

  it("mutual TLS: the caller's identity is its own connection's client certificate", async () => {
    const app = await provider({
      tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true },
      auth: { mtls: true, defaultAccess: 'allow' },
    });
    const client = greeterClient(
      `localhost:${app.grpcPort}`,
      grpc.credentials.createSsl(
        fs.readFileSync(pki.ca),
        fs.readFileSync(pki.orders.key),
        fs.readFileSync(pki.orders.cert),
      ),
    );
    clients.push(client);
    const answer = await unary<{ message: string }>(client, 'whoami', {});
    expect(answer.error).toBeUndefined();
    expect(answer.value?.message).toBe('mtls:orders');
  });

  it('the auth filter reads the authorization metadata', async () => {
    const app = await provider({ auth: { tokens: { orders: TOKEN }, defaultAccess: 'allow' } });
    const client = greeterClient(`127.0.0.1:${app.grpcPort}`);
    clients.push(client);
    const anonymous = await unary(client, 'whoami', {});
    expect(anonymous.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${TOKEN}`);
    const known = await unary<{ message: string }>(client, 'whoami', {}, { metadata });
    expect(known.error).toBeUndefined();
    expect(known.value?.message).toBe('token:orders');
  });

  it('serves gRPC on a port of its own with server.grpc.port', async () => {
    const app = await provider({ grpc: { port: 0 } });
    expect(app.grpcPort).toBeGreaterThan(0);
    expect(app.grpcPort).not.toBe(app.port);
    const client = greeterClient(`127.0.0.1:${app.grpcPort}`);
    clients.push(client);
    expect((await unary(client, 'sayHello', { name: 'own' })).value).toEqual({ message: 'hello own' });
    // the provider port then speaks Callisto only
    const onRpcPort = greeterClient(`127.0.0.1:${app.port}`);
    clients.push(onRpcPort);
    const refused = await unary(
      onRpcPort,
      'sayHello',
      { name: 'x' },
      { deadline: new Date(Date.now() + 3_000) },
    );
    expect(refused.error).toBeDefined();
  });

  it('serves gRPC over TLS on a port of its own', async () => {
    const app = await provider({ tls: { key: pki.server.key, cert: pki.server.cert }, grpc: { port: 0 } });
    expect(app.grpcPort).not.toBe(app.port);
    const answer = await unary<{ message: string }>(tlsClient(app.grpcPort!), 'sayHello', {
      name: 'own-tls',
    });
    expect(answer.value).toEqual({ message: 'hello own-tls' });
  });

  it('server.grpc.enabled: false serves no gRPC', async () => {
    const app = await provider({ grpc: { enabled: false } });
    expect(app.grpcPort).toBeUndefined();
    const client = greeterClient(`127.0.0.1:${app.port}`);
    clients.push(client);
    const refused = await unary(
      client,
      'sayHello',
      { name: 'x' },
      { deadline: new Date(Date.now() + 3_000) },
    );
    expect(refused.error).toBeDefined();
  });
});
