/**
 * A web page calls a provider with gRPC-Web, with no proxy: headless Chromium loads a page from one
 * origin and `fetch`es the provider's gRPC entry over TLS (HTTP/2 by ALPN) on another, with
 * `server.grpc.corsOrigins` listing the page's origin. The browser's preflight is answered, the call's
 * answer and trailers message are read by the page; a page from an origin not listed is refused by
 * its own browser (the preflight gets 403 and nothing is sent). Without `corsOrigins` nothing changes
 * for other clients (tested next to it with a plain HTTP/2 client).
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../dashboard/support/dashboard-env.js';
import { makePki, type Pki } from '../security/pki.js';
import { closeAll, testApp } from '../support/apps.js';
import { GreeterDef, greeterImpl, newSeen } from './greeter.js';

let pki: Pki;
let browser: Browser;
const pages: http.Server[] = [];
beforeAll(async () => {
  pki = makePki();
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  pki.remove();
});
afterEach(async () => {
  for (const server of pages.splice(0)) server.close();
  await closeAll();
});

/** A page server on its own origin (http://127.0.0.1:<port>), serving an empty page. */
async function pageOrigin(): Promise<string> {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>page</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  pages.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * What the page's gRPC-Web call of `Greeter.sayHello({ name })` at `url` gives: the HTTP status, the
 * reply's `message` and the trailers message's text, or the error `fetch` threw.
 */
const CALL_FROM_PAGE = async ({ url, name }: { url: string; name: string }) => {
  const text = new TextEncoder().encode(name);
  const message = new Uint8Array([0x0a, text.length, ...text]);
  const body = new Uint8Array(5 + message.length);
  new DataView(body.buffer).setUint32(1, message.length);
  body.set(message, 5);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc-web+proto', 'x-grpc-web': '1' },
      body,
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    let reply = '';
    let trailers = '';
    for (let at = 0; at + 5 <= bytes.length; ) {
      const flags = bytes[at]!;
      const length = new DataView(bytes.buffer, at + 1, 4).getUint32(0);
      const payload = bytes.subarray(at + 5, at + 5 + length);
      // HelloReply: field 1 (message), a length-delimited string
      if ((flags & 0x80) === 0) reply = new TextDecoder().decode(payload.subarray(2, 2 + payload[1]!));
      else trailers = new TextDecoder().decode(payload);
      at += 5 + length;
    }
    return { status: response.status, reply, trailers };
  } catch (error) {
    return { error: String(error) };
  }
};

async function provider(corsOrigins: string[]) {
  const app = await testApp({
    server: { tls: { key: pki.server.key, cert: pki.server.cert }, grpc: { corsOrigins } },
  });
  app.provide(GreeterDef, greeterImpl(newSeen()));
  await app.start();
  return app;
}

describe('gRPC-Web from a browser page', () => {
  it('a page of a listed origin calls the provider over TLS: preflight answered, reply and trailers read', async () => {
    const origin = await pageOrigin();
    const app = await provider([origin]);
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await page.goto(origin);
      const url = `https://localhost:${app.grpcPort}/callisto.test.Greeter/sayHello`;
      const result = await page.evaluate(CALL_FROM_PAGE, { url, name: 'browser' });
      expect(result).toMatchObject({ status: 200, reply: 'hello browser' });
      expect((result as { trailers: string }).trailers).toMatch(/^grpc-status: 0\r\n/);
    } finally {
      await context.close();
    }
  });

  it('a page of another origin is refused by its own browser; the provider runs nothing', async () => {
    const listed = await pageOrigin();
    const other = await pageOrigin();
    const seen = newSeen();
    const app = await testApp({
      server: { tls: { key: pki.server.key, cert: pki.server.cert }, grpc: { corsOrigins: [listed] } },
    });
    let calls = 0;
    const impl = greeterImpl(seen);
    app.provide(GreeterDef, {
      ...impl,
      sayHello: (name: string) => {
        calls++;
        return impl.sayHello(name);
      },
    });
    await app.start();
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await page.goto(other);
      const url = `https://localhost:${app.grpcPort}/callisto.test.Greeter/sayHello`;
      const result = await page.evaluate(CALL_FROM_PAGE, { url, name: 'intruder' });
      expect(result).toMatchObject({ error: expect.stringMatching(/TypeError|Failed to fetch/) });
      expect(calls).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('preflights over a plain HTTP/2 client: 204 with what may be sent for a listed origin, 403 otherwise, nothing without the option', async () => {
    const origin = 'https://app.example.com';
    for (const [corsOrigins, listedStatus] of [
      [[origin], 204],
      [[], 405],
    ] as const) {
      const app = await testApp({ server: { grpc: { corsOrigins: [...corsOrigins] } } });
      app.provide(GreeterDef, greeterImpl(newSeen()));
      await app.start();
      const session = http2.connect(`http://127.0.0.1:${app.grpcPort}`);
      const preflight = (from: string) =>
        new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
          const request = session.request({
            ':method': 'OPTIONS',
            ':path': '/callisto.test.Greeter/sayHello',
            origin: from,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type,x-grpc-web,authorization',
          });
          request.on('response', (headers) => resolve(headers));
          request.on('error', reject);
          request.resume();
          request.end();
        });
      try {
        const allowed = await preflight(origin);
        expect(allowed[':status']).toBe(listedStatus);
        if (listedStatus === 204) {
          expect(allowed['access-control-allow-origin']).toBe(origin);
          expect(allowed['access-control-allow-methods']).toBe('POST');
          expect(allowed['access-control-allow-headers']).toBe('content-type,x-grpc-web,authorization');
          expect((await preflight('https://evil.example'))[':status']).toBe(403);
        } else {
          expect(allowed['access-control-allow-origin']).toBeUndefined();
        }
      } finally {
        session.close();
        await closeAll();
      }
    }
  });
});
