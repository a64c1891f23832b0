/**
 * One set of security headers on every HTTP listener (src/http/security-headers.ts): the provider's
 * entry, the gateway, the admin port and the dashboard answer with `nosniff`, `x-frame-options: DENY`,
 * a content security policy, `referrer-policy: no-referrer` and `cache-control: no-store` — results,
 * errors, refusals and what node refuses before a request exists alike; pages state their own policy.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/index.js';
import { startDashboard, tempRegistry } from '../dashboard/support/dashboard-env.js';
import { closeAll, testApp } from '../support/apps.js';
import { httpPort, httpProvider, post, rawExchange, UserServiceDef, userService } from './support.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeAll();
});

const NOTHING = "default-src 'none'; frame-ancestors 'none'";

/** The one set, with `policy` as the content security policy. */
function expectSecurityHeaders(headers: Headers, what: string, policy = NOTHING, cache = 'no-store'): void {
  expect(
    {
      nosniff: headers.get('x-content-type-options'),
      frame: headers.get('x-frame-options'),
      policy: headers.get('content-security-policy'),
      referrer: headers.get('referrer-policy'),
      cache: headers.get('cache-control'),
    },
    what,
  ).toEqual({ nosniff: 'nosniff', frame: 'DENY', policy, referrer: 'no-referrer', cache });
}

/** The same headers in a raw answer's text (what node refuses before a request exists). */
function expectRawSecurityHeaders(text: string, what: string): void {
  const head = text.slice(0, text.indexOf('\r\n\r\n')).toLowerCase();
  for (const line of [
    'x-content-type-options: nosniff',
    'x-frame-options: deny',
    `content-security-policy: ${NOTHING}`,
    'referrer-policy: no-referrer',
    'cache-control: no-store',
  ]) {
    expect(head, `${what}: ${line}`).toContain(line.toLowerCase());
  }
}

describe('every HTTP listener answers with the security headers', () => {
  it("the provider's HTTP entry: a result, an error, a refusal, a malformed request", async () => {
    const { app, base } = await httpProvider();
    const result = await post(`${base}/example.UserService/getUser`, '[3]');
    expect(result.status).toBe(200);
    expectSecurityHeaders(result.headers, 'result');
    const refused = await post(`${base}/example.UserService/nothing`, '[]');
    expect(refused.status).toBe(404);
    expectSecurityHeaders(refused.headers, 'refusal');
    const badArguments = await post(`${base}/example.UserService/getUser`, '{}');
    expect(badArguments.status).toBe(400);
    expectSecurityHeaders(badArguments.headers, 'error');
    const malformed = await rawExchange(httpPort(app), (socket) => socket.write('NOT HTTP\r\n\r\n'));
    expect(malformed.status).toBe(400);
    expectRawSecurityHeaders(malformed.text, 'malformed');
  });

  it('the gateway: a result and a refusal', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-headers-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const registry = `file://${dir}`;
    const provider = await testApp({ registry: [registry] });
    provider.provide(UserServiceDef, userService);
    await provider.start();
    const gateway: Gateway = await createGateway({
      registry,
      port: 0,
      app: { logLevel: 'silent', load: { configFile: false, env: false } },
    });
    cleanups.push(() => gateway.close());
    const base = `http://127.0.0.1:${gateway.port}`;
    const result = await post(`${base}/example.UserService/getUser`, '[3]');
    expect(result.status).toBe(200);
    expectSecurityHeaders(result.headers, 'gateway result');
    const refused = await post(`${base}/nowhere`, '[]');
    expect(refused.status).toBe(404);
    expectSecurityHeaders(refused.headers, 'gateway refusal');
  });

  it('the admin port: JSON, errors, the metrics text, and its page with a policy for its own stylesheet', async () => {
    const app = await testApp({ admin: { enabled: true } });
    await app.start();
    const base = `http://127.0.0.1:${app.adminPort}`;
    for (const route of ['/health', '/nothing', '/metrics']) {
      expectSecurityHeaders((await fetch(`${base}${route}`)).headers, route);
    }
    const page = await fetch(`${base}/services`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    const style = /<style>(.*?)<\/style>/.exec(html)![1]!;
    const hash = (await import('node:crypto')).createHash('sha256').update(style).digest('base64');
    expectSecurityHeaders(
      page.headers,
      'admin page',
      `default-src 'none'; style-src 'sha256-${hash}'; frame-ancestors 'none'`,
    );
  });

  it('the dashboard: its API, and its page with the page policy', async () => {
    const registry = tempRegistry();
    cleanups.push(() => registry.remove());
    const dashboard = await startDashboard({ registries: [registry.address] });
    cleanups.push(() => dashboard.close());
    expectSecurityHeaders((await fetch(`${dashboard.url}api/overview`)).headers, 'dashboard API');
    expectSecurityHeaders((await fetch(`${dashboard.url}api/nothing`)).headers, 'dashboard API error');
    const page = await fetch(dashboard.url);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expectSecurityHeaders(
      page.headers,
      'dashboard page',
      page.headers.get('content-security-policy')!,
      'no-cache',
    );
  });
});
