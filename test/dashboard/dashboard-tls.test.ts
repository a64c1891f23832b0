/**
 * The dashboard's own TLS and what it needs before it listens beyond loopback: actions need TLS and a
 * token, read-only viewing a token or client certificates; over HTTPS the page works in Chromium
 * (its calls and their Origin included), and with a client CA only clients with a certificate get in.
 */
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveDashboardOptions } from '../../src/dashboard/index.js';
import { makePki, type Pki } from '../security/pki.js';
import { waitFor } from '../support/wait-for.js';
import {
  launchBrowser,
  type ProviderProcess,
  pageTrouble,
  rawRequest,
  SEE_MS,
  see,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const TOKEN = 'tls-token-2026';
const registry = tempRegistry();
let pki: Pki;
let browser: Browser;
let provider: ProviderProcess;

beforeAll(async () => {
  pki = makePki();
  [browser, provider] = await Promise.all([launchBrowser(), startProvider({ registry: registry.address })]);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await provider?.kill();
  pki?.remove();
  registry.remove();
});

describe('a dashboard beyond loopback', () => {
  const base = { registries: ['file:///x'], host: '0.0.0.0' };
  it('is refused at start without TLS and a token when it serves actions, naming the flags', () => {
    const tls = { cert: '/c.pem', key: '/k.pem' };
    for (const options of [{}, { token: TOKEN }, { tls }]) {
      expect(() => resolveDashboardOptions({ ...base, ...options })).toThrow(
        /invalid dashboard option host = "0.0.0.0": .*--tls-cert and --tls-key, and --token/,
      );
    }
    expect(resolveDashboardOptions({ ...base, tls, token: TOKEN }).host).toBe('0.0.0.0');
    expect(resolveDashboardOptions({ ...base, host: '127.0.0.2' }).host).toBe('127.0.0.2');
  });

  it('read-only, is refused without a token or client certificates', () => {
    expect(() => resolveDashboardOptions({ ...base, readOnly: true })).toThrow(
      /a token \(--token\) or client certificates \(--tls-ca\)/,
    );
    expect(() =>
      resolveDashboardOptions({ ...base, readOnly: true, tls: { cert: '/c', key: '/k' } }),
    ).toThrow(/--tls-ca/);
    expect(resolveDashboardOptions({ ...base, readOnly: true, token: TOKEN }).readOnly).toBe(true);
    expect(
      resolveDashboardOptions({ ...base, readOnly: true, tls: { cert: '/c', key: '/k', ca: '/ca' } })
        .readOnly,
    ).toBe(true);
  });

  it('with TLS and a token, serves HTTPS on every interface', async () => {
    const dashboard = await startDashboard({
      registries: [registry.address],
      host: '0.0.0.0',
      token: TOKEN,
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    try {
      expect(dashboard.url).toMatch(/^https:\/\/0\.0\.0\.0:\d+\/$/);
      const local = dashboard.url.replace('0.0.0.0', '127.0.0.1');
      const ca = fs.readFileSync(pki.ca, 'utf8');
      const page = await rawRequest(local, '/', { ca });
      expect(page.status).toBe(200);
      expect(page.body).toContain('<title>Callisto dashboard</title>');
      const api = await rawRequest(local, '/api/overview', {
        ca,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(JSON.parse(api.body).services.map((s: { name: string }) => s.name)).toEqual(['shop.Inventory']);
      // plain HTTP gets no page
      await expect(rawRequest(local.replace('https:', 'http:'), '/')).rejects.toThrow();
    } finally {
      await dashboard.close();
    }
  });
});

describe('over HTTPS', () => {
  it('the page works in Chromium: the services, and a call from Try it', async () => {
    const dashboard = await startDashboard({
      registries: [registry.address],
      token: TOKEN,
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      expect(dashboard.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
      // the provider is listed by the dashboard itself first (its registry entry lives by heartbeats)
      const ca = fs.readFileSync(pki.ca, 'utf8');
      const listed = async () => {
        const api = await rawRequest(dashboard.url, '/api/overview', {
          ca,
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        return api.body.includes('"shop.Inventory"');
      };
      await waitFor(listed, SEE_MS, { message: 'the dashboard lists shop.Inventory' });
      const page = await context.newPage();
      const trouble = pageTrouble(page);
      await page.goto(`${dashboard.url}#token=${TOKEN}`);
      await see(page.locator('table.services').getByText('shop.Inventory'), trouble);
      await page.goto(`${dashboard.url}#/service/shop.Inventory/try`);
      await page.getByLabel('Method').fill('stock');
      await page.getByLabel(/Arguments/).fill('["kiwi"]');
      await page.getByRole('button', { name: 'Call' }).click();
      const output = page.locator('#try-output');
      // the answer, or the error the page shows instead (named in the failure, not a bare timeout)
      await see(page.locator('#try-output, #try-error').first(), trouble);
      const shownError = page.locator('#try-error');
      if ((await shownError.count()) > 0) expect.fail(`Try it answered: ${await shownError.textContent()}`);
      expect(JSON.parse((await output.textContent()) ?? '')).toMatchObject({ sku: 'kiwi', count: 28 });
    } finally {
      await context.close();
      await dashboard.close();
    }
  });

  it('with a client CA, lets in only clients with a certificate it signed', async () => {
    const dashboard = await startDashboard({
      registries: [registry.address],
      tls: { cert: pki.server.cert, key: pki.server.key, ca: pki.ca },
    });
    try {
      const ca = fs.readFileSync(pki.ca, 'utf8');
      await expect(rawRequest(dashboard.url, '/', { ca })).rejects.toThrow();
      const intruder = {
        ca,
        cert: fs.readFileSync(pki.intruder.cert, 'utf8'),
        key: fs.readFileSync(pki.intruder.key, 'utf8'),
      };
      await expect(rawRequest(dashboard.url, '/', intruder)).rejects.toThrow();
      const client = {
        ca,
        cert: fs.readFileSync(pki.orders.cert, 'utf8'),
        key: fs.readFileSync(pki.orders.key, 'utf8'),
      };
      expect((await rawRequest(dashboard.url, '/', client)).status).toBe(200);
    } finally {
      await dashboard.close();
    }
  });

  it('reloads its certificate when the files change, without a restart', async () => {
    const cert = path.join(pki.dir, 'dashboard.pem');
    const key = path.join(pki.dir, 'dashboard.key');
    fs.copyFileSync(pki.server.cert, cert);
    fs.copyFileSync(pki.server.key, key);
    const dashboard = await startDashboard({
      registries: [registry.address],
      tls: { cert, key, reloadIntervalMs: 100 },
    });
    const served = (): Promise<string> => {
      const url = new URL(dashboard.url);
      return new Promise((resolve, reject) => {
        const socket = tls.connect(
          { host: url.hostname, port: Number(url.port), rejectUnauthorized: false },
          () => {
            resolve(socket.getPeerCertificate().fingerprint256);
            socket.destroy();
          },
        );
        socket.once('error', reject);
      });
    };
    try {
      const before = await served();
      const next = pki.issueServer('rotated');
      fs.copyFileSync(next.key, key);
      fs.copyFileSync(next.cert, cert);
      const after = await waitFor(async () => {
        const now = await served();
        return now !== before ? now : undefined;
      }, SEE_MS);
      expect(after).not.toBe(before);
    } finally {
      await dashboard.close();
    }
  });

  it('names the file that does not load', async () => {
    await expect(
      startDashboard({
        registries: [registry.address],
        tls: { cert: pki.server.cert, key: '/nonexistent.key' },
      }),
    ).rejects.toThrow(/invalid dashboard option tls\.key = "\/nonexistent\.key"/);
    await expect(
      startDashboard({ registries: [registry.address], tls: { cert: pki.server.cert, key: pki.orders.key } }),
    ).rejects.toThrow(/invalid dashboard option tls\.cert = .*private key is tls\.key/);
  });
});
