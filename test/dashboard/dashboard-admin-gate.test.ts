/**
 * Which admin endpoints the dashboard asks, and where its admin token goes: a record anyone wrote into
 * the registry names admin endpoints on another address (a listener of the test's own, recording
 * every request); the dashboard does not ask it and says why, while a real provider's figures show.
 * Allowed with `adminAllow`, the same listener is asked (the listener does hear what it is sent).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, type ProviderRecord, type Registry } from '../../src/registry/index.js';
import { closedPort } from '../cli/support/cli.js';
import { providerEntry } from '../cli/support/file-records.js';
import { waitFor } from '../support/wait-for.js';
import {
  launchBrowser,
  openPage,
  type ProviderProcess,
  type RunningDashboard,
  rawRequest,
  SEE_MS,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const ADMIN_TOKEN = 'admin-secret-2026';
const registry = tempRegistry();
let browser: Browser;
let provider: ProviderProcess;
let writer: Registry;
let listener: http.Server;
let listenerPort: number;
let rogueAddress: string;
/** What the listener was sent: path and Authorization header of each request. */
const heard: Array<{ path: string; authorization: string | undefined }> = [];

interface ProviderView {
  address: string;
  figures?: { calls: number };
  adminError?: string;
}

async function providersOf(dashboard: RunningDashboard): Promise<ProviderView[]> {
  const answer = await rawRequest(dashboard.url, '/api/service?name=shop.Inventory');
  return JSON.parse(answer.body).keys[0].providers as ProviderView[];
}

beforeAll(async () => {
  listener = http.createServer((request, response) => {
    heard.push({ path: request.url ?? '', authorization: request.headers.authorization });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ time: Date.now(), startTime: 0, methods: [] }));
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.2', resolve));
  listenerPort = (listener.address() as AddressInfo).port;
  [browser, provider, writer] = await Promise.all([
    launchBrowser(),
    startProvider({ registry: registry.address, admin: true }),
    createRegistry(registry.address, { ttlMs: 2_000 }),
  ]);
  const port = await closedPort();
  rogueAddress = `127.0.0.1:${port}`;
  // a record on 127.0.0.1 whose admin endpoints are said to be elsewhere
  await writer.register(
    providerEntry('shop.Inventory', port, {
      methods: ['stock'],
      admin: { host: '127.0.0.2', port: listenerPort },
    }) as ProviderRecord,
  );
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await writer?.close();
  await provider?.kill();
  await new Promise((resolve) => listener?.close(resolve));
  registry.remove();
});

describe('admin endpoints named by a record', () => {
  it('are not asked on another host than the record’s: no request, no token; the real provider’s figures show', async () => {
    const dashboard = await startDashboard({ registries: [registry.address], adminToken: ADMIN_TOKEN });
    try {
      const providers = await waitFor(async () => {
        const list = await providersOf(dashboard);
        return list.length === 2 && list.some((p) => p.figures !== undefined) ? list : undefined;
      }, SEE_MS);
      const rogue = providers.find((p) => p.address === rogueAddress)!;
      const real = providers.find((p) => p.address === provider.address)!;
      expect(real.figures).toBeDefined();
      expect(rogue.figures).toBeUndefined();
      expect(rogue.adminError).toBe(
        `not asked: the record names admin endpoints on 127.0.0.2:${listenerPort}, not on its own host 127.0.0.1 (allow them with --admin-allow 127.0.0.2:${listenerPort})`,
      );
      const config = JSON.parse(
        (await rawRequest(dashboard.url, '/api/config?name=shop.Inventory')).body,
      ) as { providers: Array<{ address: string; error?: string; config?: unknown }> };
      expect(config.providers.find((p) => p.address === rogueAddress)?.error).toMatch(/^not asked: /);
      expect(config.providers.find((p) => p.address === provider.address)?.config).toBeDefined();

      // the page says why
      const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
      try {
        await page
          .locator('.admin-problems li', { hasText: rogueAddress })
          .getByText(/not asked: the record names admin endpoints on 127\.0\.0\.2/)
          .waitFor({ timeout: SEE_MS });
      } finally {
        await close();
      }
      expect(heard).toEqual([]);
    } finally {
      await dashboard.close();
    }
  });

  it('are asked, with the admin token, when allowed with adminAllow', async () => {
    const dashboard = await startDashboard({
      registries: [registry.address],
      adminToken: ADMIN_TOKEN,
      adminAllow: [`127.0.0.2:${listenerPort}`],
    });
    try {
      await providersOf(dashboard);
      await waitFor(() => heard.length > 0 || undefined, SEE_MS);
      expect(heard[0]).toEqual({ path: '/stats', authorization: `Bearer ${ADMIN_TOKEN}` });
    } finally {
      await dashboard.close();
    }
  });
});
