/**
 * "TLS only" holds on every port: with server.tls the HTTP/JSON entry serves HTTPS with the same
 * certificates (reloaded with them), asks for client certificates when server.tls does and takes the
 * caller's mTLS identity from its own connection; plaintext HTTP is refused, and served next to TLS only
 * with `server.http.plaintext: true`, with a warning naming the port. Over real sockets.
 */
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type AppOptions, callContext, defineService, type Logger } from '../../src/index.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { post, rawExchange } from './support.js';

const Who = defineService<{ whoami(): Promise<unknown> }>('test.HttpsWho', { methods: { whoami: {} } });

let pki: Pki;
beforeAll(() => {
  pki = makePki();
});
afterAll(() => pki.remove());
afterEach(closeAll);

function capture(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

async function tlsProvider(
  tlsConfig: Record<string, unknown> = {},
  extra: { http?: Record<string, unknown>; auth?: Record<string, unknown>; logger?: Logger } = {},
) {
  const app = await testApp({
    ...(extra.logger ? { logger: extra.logger } : {}),
    server: {
      tls: { key: pki.server.key, cert: pki.server.cert, ...tlsConfig },
      http: { port: 0, ...extra.http },
      ...(extra.auth ? { auth: extra.auth } : {}),
    } as AppOptions['server'],
  });
  app.provide(Who, { whoami: () => callContext()?.identity ?? 'anonymous' });
  await app.start();
  return app;
}

interface Answer {
  status: number;
  body: unknown;
  /** The fingerprint of the certificate the server presented. */
  served: string;
}

/** POST whoami over HTTPS on a connection of its own. */
function httpsWhoami(port: number, options: https.RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/test.HttpsWho/whoami',
        headers: { 'content-type': 'application/json' },
        agent: false,
        ca: fs.readFileSync(pki.ca),
        servername: 'localhost',
        ...options,
      },
      (response) => {
        const served = (response.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString()),
            served,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end('[]');
  });
}

const client = (pair: { key: string; cert: string }) => ({
  key: fs.readFileSync(pair.key),
  cert: fs.readFileSync(pair.cert),
});

describe('the HTTP entry of a TLS provider', () => {
  it('refuses plaintext HTTP and serves HTTPS with server.tls, trusted through the CA', async () => {
    const { lines, logger } = capture();
    const app = await tlsProvider({}, { logger });
    const port = app.httpPort!;
    await expect(post(`http://127.0.0.1:${port}/test.HttpsWho/whoami`, '[]')).rejects.toThrow();
    const raw = await rawExchange(port, (socket) =>
      socket.write('POST /test.HttpsWho/whoami HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n[]'),
    );
    expect(raw.status).toBe(0); // no HTTP answer at all: the connection is closed
    expect(await httpsWhoami(port)).toMatchObject({ status: 200, body: 'anonymous' });
    // an HTTPS client that does not trust the CA gets nowhere either
    await expect(httpsWhoami(port, { ca: fs.readFileSync(pki.otherCa) })).rejects.toThrow(/certificate/);
    await waitFor(() => lines.some((line) => /TLS handshake from .* failed.*plaintext/.test(line)), 5_000);
  });

  it('serves plaintext only with server.http.plaintext: true, and warns naming the port', async () => {
    const { lines, logger } = capture();
    const app = await tlsProvider({}, { logger, http: { plaintext: true } });
    const port = app.httpPort!;
    const answer = await post(`http://127.0.0.1:${port}/test.HttpsWho/whoami`, '[]');
    expect(answer).toMatchObject({ status: 200, json: 'anonymous' });
    const warning = lines.find((line) => line.includes('plaintext'));
    expect(warning).toMatch(
      new RegExp(`plaintext HTTP on 127\\.0\\.0\\.1:${port}.*server\\.http\\.plaintext`),
    );
    // without server.tls, plaintext is the only way and nothing warns
    const { lines: plainLines, logger: plainLogger } = capture();
    const plain = await testApp({ logger: plainLogger, server: { http: { port: 0, plaintext: true } } });
    plain.provide(Who, { whoami: () => 'plain' });
    await plain.start();
    expect((await post(`http://127.0.0.1:${plain.httpPort!}/test.HttpsWho/whoami`, '[]')).json).toBe('plain');
    expect(plainLines.filter((line) => line.includes('plaintext'))).toEqual([]);
  });

  it("takes the caller's identity from the client certificate of its own HTTPS connection", async () => {
    const app = await tlsProvider(
      { ca: pki.ca, requestCert: true },
      { auth: { mtls: true, defaultAccess: 'allow' } },
    );
    const port = app.httpPort!;
    expect(await httpsWhoami(port, client(pki.orders))).toMatchObject({
      status: 200,
      body: { id: 'orders', via: 'mtls' },
    });
    expect(await httpsWhoami(port, client(pki.billing))).toMatchObject({ body: { id: 'billing' } });
    // no certificate: refused at the handshake (server.tls.rejectUnauthorized)
    await expect(httpsWhoami(port)).rejects.toThrow();
  });

  it('reloads its certificates with server.tls: new connections get the new one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-https-reload-'));
    try {
      const key = path.join(dir, 'server.key');
      const cert = path.join(dir, 'server.pem');
      fs.copyFileSync(pki.server.key, key);
      fs.copyFileSync(pki.server.cert, cert);
      const app = await tlsProvider({ key, cert, reloadIntervalMs: 20 });
      const port = app.httpPort!;
      const before = await httpsWhoami(port);
      const next = pki.issueServer('rotated');
      fs.copyFileSync(next.key, `${key}.tmp`);
      fs.copyFileSync(next.cert, `${cert}.tmp`);
      fs.renameSync(`${key}.tmp`, key);
      fs.renameSync(`${cert}.tmp`, cert);
      await waitFor(async () => (await httpsWhoami(port)).served !== before.served, 10_000, {
        message: 'the HTTPS entry never served the rotated certificate',
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
