/**
 * The routing rules on a service's Overview (docs/routing.md), in headless Chromium: a real provider
 * process on a file registry, rules written through the registry's runtime control, shown in the order
 * a call meets them (whatever order they are stored in), and gone from the page when removed.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistryControl, type RegistryControl } from '../../src/registry/index.js';
import {
  launchBrowser,
  openPage,
  type ProviderProcess,
  type RunningDashboard,
  SEE_MS,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const registry = tempRegistry();
let browser: Browser;
let dashboard: RunningDashboard;
let provider: ProviderProcess;
let control: RegistryControl;

beforeAll(async () => {
  [browser, provider] = await Promise.all([
    launchBrowser(),
    startProvider({ registry: registry.address, application: 'inventory-a' }),
  ]);
  dashboard = await startDashboard({ registries: [registry.address] });
  control = createRegistryControl(registry.address);
}, 90_000);

afterAll(async () => {
  await control?.close();
  await browser?.close();
  await dashboard?.close();
  await provider?.kill();
  registry.remove();
});

describe('routing rules on the dashboard', () => {
  it('lists the rules of a service in the order a call meets them, and follows their removal', async () => {
    await control.setRoute('shop.Inventory', { name: 'local', kind: 'zone', threshold: 0.8 });
    await control.setRoute('shop.Inventory', {
      name: 'web-v2',
      kind: 'condition',
      rule: 'application = web => tag = v2',
      force: true,
    });
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      const rows = page.locator('table.routes tbody tr');
      await rows.first().waitFor({ timeout: SEE_MS });
      await expect.poll(async () => (await rows.all()).length, { timeout: SEE_MS }).toBe(2);
      expect(await rows.nth(0).locator('td').allTextContents()).toEqual([
        '1',
        'web-v2',
        'condition',
        'application = web => tag = v2 (forced)',
      ]);
      expect(await rows.nth(1).locator('td').allTextContents()).toEqual([
        '2',
        'local',
        'zone',
        'local zone first, threshold 0.8, panic below 0.5',
      ]);
      await control.removeRoute('shop.Inventory', 'web-v2');
      await control.removeRoute('shop.Inventory', 'local');
      await page.reload();
      await page.locator('.routes-none').waitFor({ timeout: SEE_MS });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
