/** A dashboard started with a token, in headless Chromium: the page asks for it, refuses a wrong one, takes the right one. */
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

const TOKEN = 'open-sesame-2026';
const registry = tempRegistry();
let browser: Browser;
let dashboard: RunningDashboard;
let provider: ProviderProcess;

beforeAll(async () => {
  [browser, provider] = await Promise.all([launchBrowser(), startProvider({ registry: registry.address })]);
  dashboard = await startDashboard({ registries: [registry.address], token: TOKEN });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await provider?.kill();
  registry.remove();
});

describe('a dashboard behind a token', () => {
  it('shows nothing without the token, refuses a wrong one and shows the services with the right one', async () => {
    const { page, problems, close } = await openPage(browser, dashboard.url);
    try {
      await page
        .getByRole('heading', { name: 'This dashboard needs its token' })
        .waitFor({ timeout: SEE_MS });
      expect(await page.locator('table.services').count()).toBe(0);

      await page.getByLabel('Token').fill('not-the-token');
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.getByText('The token was refused').waitFor({ timeout: SEE_MS });
      expect(await page.locator('table.services').count()).toBe(0);

      await page.getByLabel('Token').fill(TOKEN);
      await page.getByRole('button', { name: 'Use this token' }).click();
      await page.locator('table.services').getByText('shop.Inventory').waitFor({ timeout: SEE_MS });
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('takes the token from the address the command prints, and takes it out of the address', async () => {
    const { page, close } = await openPage(browser, `${dashboard.url}#token=${TOKEN}`);
    try {
      await page.locator('table.services').getByText('shop.Inventory').waitFor({ timeout: SEE_MS });
      expect(page.url()).not.toContain(TOKEN);
    } finally {
      await close();
    }
  });
});
