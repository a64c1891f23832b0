/**
 * The dashboard with what other parts of Callisto provide: the providers' admin endpoints (live charts,
 * last failures, Config) and the registry's runtime control (actions). Real providers with admin
 * endpoints, a consumer under load, the page in headless Chromium.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import {
  launchBrowser,
  openPage,
  type ProviderProcess,
  type RunningDashboard,
  runLoad,
  SEE_MS,
  startConsumer,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const registry = tempRegistry();
let browser: Browser;
let dashboard: RunningDashboard;
let consumer: Awaited<ReturnType<typeof startConsumer>>;
const providers: ProviderProcess[] = [];

beforeAll(async () => {
  const [launched, a, b] = await Promise.all([
    launchBrowser(),
    startProvider({
      registry: registry.address,
      application: 'inventory-a',
      admin: true,
      adaptiveLimitInitial: 4321,
    }),
    startProvider({ registry: registry.address, application: 'inventory-b', admin: true }),
  ]);
  browser = launched;
  providers.push(a, b);
  [dashboard, consumer] = await Promise.all([
    startDashboard({ registries: [registry.address] }),
    startConsumer(registry.address),
  ]);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await consumer?.app.close();
  await Promise.allSettled(providers.map((p) => p.kill()));
  registry.remove();
});

describe('live figures from the admin endpoints', () => {
  it('draws a calls/s chart that moves while load runs, shows the queue time, and counts each provider', async () => {
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    const load = runLoad(() => consumer.inventory.stock('apple'));
    try {
      const chart = page.locator('figure.chart[data-metric="calls"][data-method="stock"]');
      await chart.waitFor({ timeout: SEE_MS });
      await expect
        .poll(async () => Number(await chart.getAttribute('data-last')), { timeout: SEE_MS })
        .toBeGreaterThan(0);
      const line = chart.locator('polyline');
      await line.waitFor({ timeout: SEE_MS });
      const before = await line.getAttribute('points');
      await expect.poll(() => line.getAttribute('points'), { timeout: SEE_MS }).not.toBe(before);
      expect(await chart.locator('.chart-value').textContent()).toMatch(/^\d+(\.\d)?\/s$/);
      // the method's queue time (read to running), as its providers' /stats give it
      const queue = page.locator('section.method-charts', { hasText: 'stock' }).locator('.queue-time');
      await queue.waitFor({ timeout: SEE_MS });
      expect(Number(await queue.getAttribute('data-queue-p99'))).toBeGreaterThanOrEqual(0);
      expect(await queue.textContent()).toMatch(/queue p99 [\d.]+ ?(ms|µs|s)/);
      // the charts stack on a narrow window: nothing wider than the screen
      await page.setViewportSize({ width: 390, height: 800 });
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth'),
      ).toBeLessThanOrEqual(0);
      await page.setViewportSize({ width: 1280, height: 800 });
      for (const provider of providers) {
        const calls = page
          .locator('table.providers tr', { hasText: provider.address })
          .locator('.provider-calls');
        await expect
          .poll(async () => Number(await calls.getAttribute('data-calls')), { timeout: SEE_MS })
          .toBeGreaterThan(0);
      }
      expect(problems).toEqual([]);
    } finally {
      await load.stop();
      await close();
    }
  });

  it("shows each provider's adaptive concurrency limit: in flight / limit, and what it refused", async () => {
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      const [a, b] = providers as [ProviderProcess, ProviderProcess];
      const cellOf = (provider: ProviderProcess) =>
        page.locator('table.providers tr', { hasText: provider.address }).locator('.adaptive-limit');
      await cellOf(a).waitFor({ timeout: SEE_MS });
      expect(await cellOf(a).getAttribute('data-limit')).toBe('4321');
      expect(await cellOf(a).textContent()).toMatch(/^\d+ \/ 4321/);
      expect(await cellOf(a).getAttribute('title')).toMatch(/refused 0, admitted \d+; event-loop delay/);
      // the other one started at the default, 10 000 (the load before may have taught it a lower one)
      await cellOf(b).waitFor({ timeout: SEE_MS });
      expect(Number(await cellOf(b).getAttribute('data-limit'))).toBeGreaterThanOrEqual(20);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('shows the last failure of a method, and the method declarations', async () => {
    await consumer.inventory.broken().catch(() => {});
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      const row = page.locator('table.methods tbody tr', { hasText: 'broken' });
      await row.getByText('the shelf fell over').waitFor({ timeout: SEE_MS });
      const stock = page.locator('table.methods tbody tr', { hasText: 'stock' });
      await stock.getByText('idempotent').waitFor({ timeout: SEE_MS });
      await page
        .locator('table.methods tbody tr', { hasText: 'slow' })
        .getByText('timeout 3000 ms')
        .waitFor();
    } finally {
      await close();
    }
  });

  it("shows each provider's configuration with where each value came from", async () => {
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory/config`);
    try {
      for (const provider of providers) {
        const section = page.locator('section.provider-config', { hasText: provider.address });
        await section.waitFor({ timeout: SEE_MS });
        const application = section.locator('table.config tr', {
          has: page.locator('td:first-child', { hasText: /^application$/ }),
        });
        await application.waitFor({ timeout: SEE_MS });
        expect(await application.locator('td').nth(1).textContent()).toMatch(/^inventory-[ab]$/);
        expect(await application.locator('td').nth(2).textContent()).not.toBe('default');
      }
      // values left at their defaults only on request
      const defaults = page.locator('table.config td:nth-child(3)', { hasText: /^default$/ });
      expect(await defaults.count()).toBe(0);
      await page.getByLabel('Show the values left at their defaults').check();
      await defaults.first().waitFor({ timeout: SEE_MS });
    } finally {
      await close();
    }
  });
});

describe('actions through the runtime control', () => {
  it('disables a provider from the page: traffic to it stops while the other serves; enabling brings it back', async () => {
    const [a, b] = providers as [ProviderProcess, ProviderProcess];
    const { page, problems, close } = await openPage(
      browser,
      `${dashboard.url}#/service/shop.Inventory/actions`,
    );
    try {
      const row = page.locator('table.providers tr', { hasText: a.address });
      await row.getByRole('button', { name: 'Disable' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText(`stop sending calls to ${a.address}`).waitFor();
      await dialog.getByRole('button', { name: 'Disable' }).click();
      await row.getByText('disabled').waitFor({ timeout: SEE_MS });

      // the consumers apply it: once they have, a run of calls all go to b
      await waitFor(
        async () => {
          const before = await consumer.servedBy(a.address);
          for (let i = 0; i < 20; i++) await consumer.inventory.stock('pear');
          return (await consumer.servedBy(a.address)) === before;
        },
        SEE_MS,
        { message: 'calls still reach the disabled provider' },
      );
      const [aBefore, bBefore] = await Promise.all([
        consumer.servedBy(a.address),
        consumer.servedBy(b.address),
      ]);
      for (let i = 0; i < 200; i++) await consumer.inventory.stock('pear');
      expect(await consumer.servedBy(a.address)).toBe(aBefore);
      expect(await consumer.servedBy(b.address)).toBe(bBefore + 200);

      await row.getByRole('button', { name: 'Enable' }).click();
      await dialog.getByRole('button', { name: 'Enable' }).click();
      await row.getByRole('button', { name: 'Disable' }).waitFor({ timeout: SEE_MS });
      expect(await row.textContent()).not.toContain('disabled');
      await waitFor(
        async () => {
          const before = await consumer.servedBy(a.address);
          for (let i = 0; i < 20; i++) await consumer.inventory.stock('pear');
          return (await consumer.servedBy(a.address)) > before;
        },
        SEE_MS,
        { message: 'the enabled provider gets no call' },
      );
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('changes a weight and a mock mode, each confirmed, and shows them', async () => {
    const [, b] = providers as [ProviderProcess, ProviderProcess];
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory/actions`);
    try {
      const row = page.locator('table.providers tr', { hasText: b.address });
      await row.getByRole('button', { name: 'Weight…' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel(/New weight/).fill('250');
      await dialog.getByRole('button', { name: 'Set weight' }).click();
      await row.getByText('250 (registered 100)').waitFor({ timeout: SEE_MS });

      await row.getByRole('button', { name: 'Weight…' }).click();
      await dialog.getByLabel(/New weight/).fill('20000');
      await dialog.getByRole('button', { name: 'Set weight' }).click();
      await dialog.getByText('the weight must be an integer from 0 to 10000').waitFor({ timeout: SEE_MS });
      await dialog.getByRole('button', { name: 'Cancel' }).click();

      const method = page.locator('table.mock-modes tr', { hasText: 'broken' });
      await method.getByRole('button', { name: 'Mock mode…' }).click();
      await dialog.getByLabel('Mode').selectOption('fail');
      await dialog.getByRole('button', { name: 'Switch' }).click();
      await method.getByText('fail').waitFor({ timeout: SEE_MS });
      await method.getByRole('button', { name: 'Mock mode…' }).click();
      await dialog.getByLabel('Mode').selectOption('off');
      await dialog.getByRole('button', { name: 'Switch' }).click();
      await method.locator('td', { hasText: /^off$/ }).waitFor({ timeout: SEE_MS });
    } finally {
      await close();
    }
  });

  it('closes a confirm dialog when the page is left by Back or by a link, applying nothing', async () => {
    const [, b] = providers as [ProviderProcess, ProviderProcess];
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory`);
    try {
      await page.goto(`${dashboard.url}#/service/shop.Inventory/actions`);
      const row = page.locator('table.providers tr', { hasText: b.address });
      const dialog = page.getByRole('dialog');
      await row.getByRole('button', { name: 'Disable' }).click();
      await dialog.getByText(`stop sending calls to ${b.address}`).waitFor({ timeout: SEE_MS });
      await page.goBack();
      await dialog.waitFor({ state: 'hidden', timeout: SEE_MS });

      await page.goForward();
      await row.getByRole('button', { name: 'Weight…' }).click();
      await dialog.getByLabel(/New weight/).waitFor({ timeout: SEE_MS });
      await page.evaluate("window.location.hash = '#/'");
      await dialog.waitFor({ state: 'hidden', timeout: SEE_MS });
      // nothing was applied: b is still enabled
      await page.goto(`${dashboard.url}#/service/shop.Inventory/actions`);
      await row.getByRole('button', { name: 'Disable' }).waitFor({ timeout: SEE_MS });
    } finally {
      await close();
    }
  });
});
