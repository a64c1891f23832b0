/**
 * The dashboard as a person uses it: real provider processes on a file registry, the dashboard on a free
 * port, headless Chromium looking at the page. Everything waits for what the page shows (no sleeps).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
let first: ProviderProcess;
const providers: ProviderProcess[] = [];

beforeAll(async () => {
  [browser, first] = await Promise.all([
    launchBrowser(),
    startProvider({ registry: registry.address, application: 'inventory-a' }),
  ]);
  providers.push(first);
  dashboard = await startDashboard({ registries: [registry.address] });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await Promise.allSettled(providers.map((p) => p.kill()));
  registry.remove();
});

describe('the dashboard page', () => {
  it('lists the services of the registry, and the search narrows the list', async () => {
    const { page, problems, close } = await openPage(browser, dashboard.url);
    try {
      const row = page.locator('table.services tbody tr', { hasText: 'shop.Inventory' });
      await row.waitFor({ timeout: SEE_MS });
      await expect
        .poll(() => row.locator('td').allTextContents(), { timeout: SEE_MS })
        .toEqual(['shop.Inventory', '1.0.0', '-', '1', '0', 'ok']);
      await page
        .getByText(/connected/)
        .first()
        .waitFor();
      await page.getByLabel('Search').fill('nothing-like-this');
      await page.getByText('0 of 1 services shown').waitFor({ timeout: SEE_MS });
      await page.getByLabel('Search').fill('invent');
      await row.waitFor({ timeout: SEE_MS });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows a provider when it starts and drops it when it is killed, without a reload', async () => {
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      const rows = page.locator('table.providers tbody tr');
      await page.locator('table.providers').getByText(first.address).waitFor({ timeout: SEE_MS });
      const second = await startProvider({ registry: registry.address, application: 'inventory-b' });
      providers.push(second);
      const row = rows.filter({ hasText: second.address });
      await row.waitFor({ timeout: SEE_MS });
      expect(await row.textContent()).toContain('inventory-b');
      await expect.poll(() => rows.count(), { timeout: SEE_MS }).toBe(2);
      await second.kill();
      await row.waitFor({ state: 'detached', timeout: SEE_MS });
      await expect.poll(() => rows.count(), { timeout: SEE_MS }).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows the methods the providers declare, and what live figures need', async () => {
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      const methods = page.locator('table.methods tbody tr');
      await methods.first().waitFor({ timeout: SEE_MS });
      await expect
        .poll(() => methods.locator('td:first-child').allTextContents(), { timeout: SEE_MS })
        .toEqual(['broken', 'served', 'slow', 'stock']);
      // these providers serve no admin endpoints: the page says what the live figures need
      await page
        .getByText('metrics need admin endpoints: enable `admin` on providers')
        .waitFor({ timeout: SEE_MS });
    } finally {
      await close();
    }
  });

  it('makes a call from Try it and shows the result and its timing', async () => {
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory/try`);
    try {
      await page.getByLabel('Method').fill('stock');
      await page.getByLabel(/Arguments/).fill('["apple"]');
      await page.getByRole('button', { name: 'Call' }).click();
      const output = page.locator('#try-output');
      await output.waitFor({ timeout: SEE_MS });
      expect(JSON.parse((await output.textContent()) ?? '')).toEqual({
        sku: 'apple',
        count: 35,
        warehouse: 'north',
      });
      expect(await page.locator('.timing').textContent()).toMatch(/^in \d+\.\d ms$/);

      // the service's echo, through the provider's filters: the value comes back as sent
      await page.getByLabel('Method').fill('$echo');
      await page.getByLabel(/Arguments/).fill('[{"ping": 7}]');
      await page.getByRole('button', { name: 'Call' }).click();
      await page.locator('#try-output').getByText('"ping": 7').waitFor({ timeout: SEE_MS });
      expect(JSON.parse((await page.locator('#try-output').textContent()) ?? '')).toEqual({ ping: 7 });
      expect(await page.locator('#try-methods option[value="$echo"]').count()).toBe(1);

      // the provider's own error, as the caller gets it
      await page.getByLabel('Method').fill('broken');
      await page.getByLabel(/Arguments/).fill('[]');
      await page.getByRole('button', { name: 'Call' }).click();
      await page.locator('#try-error').getByText('the shelf fell over').waitFor({ timeout: SEE_MS });
      expect(await page.locator('#try-error').textContent()).toMatch(
        /^ProviderError Error: the shelf fell over/,
      );
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('says clearly what is wrong with malformed arguments and an unknown method', async () => {
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory/try`);
    try {
      await page.getByLabel('Method').fill('stock');
      await page.getByLabel(/Arguments/).fill('["apple"');
      await page.getByRole('button', { name: 'Call' }).click();
      await page
        .locator('#try-error')
        .getByText('the arguments are not valid JSON')
        .waitFor({ timeout: SEE_MS });

      await page.getByLabel(/Arguments/).fill('{"sku": "apple"}');
      await page.getByRole('button', { name: 'Call' }).click();
      await page
        .locator('#try-error')
        .getByText('the arguments must be a JSON array')
        .waitFor({ timeout: SEE_MS });

      await page.getByLabel('Method').fill('restock');
      await page.getByLabel(/Arguments/).fill('[]');
      await page.getByRole('button', { name: 'Call' }).click();
      await page
        .locator('#try-error')
        .getByText(/restock/)
        .waitFor({ timeout: SEE_MS });
      expect(await page.locator('#try-error').textContent()).toBe(
        'MethodNotFound: service shop.Inventory:1.0.0 has no method "restock"',
      );
    } finally {
      await close();
    }
  });

  it('says so when the address names a service nobody registered, with the likely one', async () => {
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventroy`);
    try {
      const banner = page.locator('.view-error');
      await banner
        .getByText('no service named "shop.Inventroy" in the registries')
        .waitFor({ timeout: SEE_MS });
      expect(await banner.textContent()).toContain('did you mean shop.Inventory?');
    } finally {
      await close();
    }
  });

  it('is usable from the keyboard: Tab reaches a service, Enter opens it, focus is visible', async () => {
    const { page, close } = await openPage(browser, dashboard.url);
    try {
      await page.locator('table.services').getByText('shop.Inventory').waitFor({ timeout: SEE_MS });
      let focused = '';
      for (let i = 0; i < 12 && focused !== 'shop.Inventory'; i++) {
        await page.keyboard.press('Tab');
        focused = await page.evaluate<string>("document.activeElement?.textContent ?? ''");
      }
      expect(focused).toBe('shop.Inventory');
      const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
      expect(outline).toBe('solid');
      await page.keyboard.press('Enter');
      await page.locator('h1.service-name', { hasText: 'shop.Inventory' }).waitFor({ timeout: SEE_MS });
      expect(page.url()).toContain('#/service/shop.Inventory');
    } finally {
      await close();
    }
  });

  it('fits a narrow window: nothing wider than the screen but the tables, which scroll', async () => {
    for (const hash of ['#/', '#/service/shop.Inventory', '#/service/shop.Inventory/try']) {
      const { page, problems, close } = await openPage(browser, `${dashboard.url}${hash}`, {
        width: 390,
        height: 800,
      });
      try {
        // this test is about the layout: a page whose script did not run (once, in a loaded suite, no
        // h1 within 20 s) is loaded once more, and if it still shows nothing the failure says what the
        // page saw
        const heading = page.locator('main h1');
        await heading.waitFor({ timeout: SEE_MS / 2 }).catch(async () => {
          await page.reload();
          await heading.waitFor({ timeout: SEE_MS }).catch(async (error: unknown) => {
            const text = ((await page.locator('body').textContent()) ?? '').slice(0, 300);
            throw new Error(
              `${hash}: no heading (${problems.join('; ') || 'no page errors'}; body: ${text})`,
              {
                cause: error,
              },
            );
          });
        });
        await page.locator('table, form').first().waitFor({ timeout: SEE_MS });
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        expect(overflow, hash).toBeLessThanOrEqual(0);
      } finally {
        await close();
      }
    }
  });
});
