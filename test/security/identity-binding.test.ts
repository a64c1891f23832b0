/**
 * A mutual-TLS identity belongs to the connection that proved it, never to an address: a request
 * from the very `ip:port` of an mTLS consumer's open connection — on the plaintext HTTP entry, or on
 * the HTTPS entry with another certificate — is not served as that consumer. Both connections come
 * from one local port (libuv binds with SO_REUSEADDR; TCP tells them apart by their remote ends), as a
 * local process could arrange by reading the consumer's port from /proc/net/tcp.
 */

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type AppOptions, type CallerIdentity, callContext, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { makePki, type Pki } from './pki.js';

const Who = defineService<{ whoami(): Promise<CallerIdentity | null> }>('test.BoundWho', {
  methods: { whoami: {} },
});

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
const opened = new Set<net.Socket>();
afterEach(async () => {
  for (const socket of opened) socket.destroy();
  opened.clear();
  await closeAll();
});

async function mtlsProvider(http: Record<string, unknown>) {
  const app = await testApp({
    server: {
      tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true },
      auth: { mtls: true, defaultAccess: 'allow' },
      http: { port: 0, ...http },
    } as AppOptions['server'],
  });
  app.provide(Who, { whoami: () => callContext()?.identity ?? null });
  await app.start();
  return app;
}

/** A free local port to connect from. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The `orders` consumer's mTLS connection to the provider's wire port, from `localPort`; kept open. */
async function ordersConnection(app: Awaited<ReturnType<typeof mtlsProvider>>, localPort: number) {
  const tcp = net.connect({
    host: '127.0.0.1',
    port: appInternals(app).provider.server!.port,
    localAddress: '127.0.0.1',
    localPort,
  });
  opened.add(tcp);
  const socket = tls.connect({
    socket: tcp,
    servername: 'localhost',
    ca: fs.readFileSync(pki.ca),
    key: fs.readFileSync(pki.orders.key),
    cert: fs.readFileSync(pki.orders.cert),
  });
  opened.add(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
  });
  await waitFor(() => appInternals(app).provider.server!.connectionCount === 1, 5_000);
}

/** POST whoami to the HTTP entry from `localPort`; its status and body. */
function whoami(
  port: number,
  localPort: number,
  secure?: https.RequestOptions,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      port,
      localAddress: '127.0.0.1',
      localPort,
      method: 'POST',
      path: '/test.BoundWho/whoami',
      headers: { 'content-type': 'application/json' },
      agent: false,
      ...secure,
    };
    const request = (secure ? https.request : http.request)(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    request.on('error', reject);
    request.end('[]');
  });
}

describe('an mTLS identity is bound to its connection', () => {
  it('a plaintext HTTP request from the ip:port of an open mTLS connection is not served as its consumer', async () => {
    const app = await mtlsProvider({ plaintext: true });
    const localPort = await freePort();
    await ordersConnection(app, localPort);
    const answer = await whoami(app.httpPort!, localPort);
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.body)).not.toContain('orders');
  });

  it('an HTTPS request from that ip:port with another certificate is served as the certificate it presented', async () => {
    const app = await mtlsProvider({});
    const localPort = await freePort();
    await ordersConnection(app, localPort);
    const answer = await whoami(app.httpPort!, localPort, {
      ca: fs.readFileSync(pki.ca),
      key: fs.readFileSync(pki.billing.key),
      cert: fs.readFileSync(pki.billing.cert),
      servername: 'localhost',
    });
    expect(answer).toEqual({ status: 200, body: { id: 'billing', via: 'mtls' } });
  });
});
