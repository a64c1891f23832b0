/**
 * Regenerates the dashboard's screenshots in docs/images/ (`npm run screenshots`; not part of npm test):
 * three providers of shop.Inventory on a file registry of its own, a consumer keeping them busy, the
 * dashboard, and headless Chromium taking each page at 1280×800 (and the services list at 390 px).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callisto, defineService } from '../src/index.js';
import {
  launchBrowser,
  openPage,
  type ProviderProcess,
  SEE_MS,
  startDashboard,
  startProvider,
  tempRegistry,
} from '../test/dashboard/support/dashboard-env.js';

const IMAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/images');

interface Inventory {
  stock(sku: string): Promise<unknown>;
  broken(): Promise<unknown>;
}

const registry = tempRegistry();
const providers: ProviderProcess[] = [];
let stop = false;
try {
  for (const application of ['inventory-eu', 'inventory-eu', 'inventory-us']) {
    providers.push(await startProvider({ registry: registry.address, application, admin: true }));
  }
  const consumer = await callisto({
    application: 'storefront',
    registry: [registry.address],
    registryTtlMs: 2_000, // as the providers and the dashboard: the file registry judges entries by it
    consumer: { snapshotDir: '' },
    logLevel: 'silent',
    load: { configFile: false, env: false },
  });
  const inventory = consumer.refer(defineService<Inventory>('shop.Inventory', { version: '1.0.0' }));
  const load = (async () => {
    for (let i = 0; !stop; i++) {
      await inventory.stock(`sku-${i % 50}`).catch(() => {});
      if (i % 25 === 0) await inventory.broken().catch(() => {});
      if (i % 20 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const dashboard = await startDashboard({ registries: [registry.address] });
  const browser = await launchBrowser();
  try {
    const shoot = async (hash: string, name: string, ready: string, width = 1280) => {
      const { page, close } = await openPage(browser, `${dashboard.url}${hash}`, { width, height: 800 });
      try {
        await page.locator(ready).first().waitFor({ timeout: SEE_MS });
        if (hash.endsWith('Inventory')) {
          // a few seconds of figures so the lines have a shape
          const chart = page.locator('.chart').first();
          for (let i = 0; i < 100 && Number(await chart.getAttribute('data-points')) < 8; i++) {
            await page.waitForTimeout(200); // a picture, not a test: let the history grow
          }
        }
        await page.screenshot({
          path: path.join(IMAGES, `${name}.png`),
          fullPage: width === 1280 && name !== 'dashboard-services',
        });
        process.stdout.write(`docs/images/${name}.png\n`);
        return page;
      } finally {
        await close();
      }
    };
    await shoot('#/', 'dashboard-services', 'table.services');
    await shoot('#/', 'dashboard-services-narrow', 'table.services', 390);
    await shoot('#/service/shop.Inventory', 'dashboard-service', 'table.providers');
    await shoot('#/service/shop.Inventory/actions', 'dashboard-actions', 'table.providers');
    const { page, close } = await openPage(browser, `${dashboard.url}#/service/shop.Inventory/try`);
    try {
      await page.getByLabel('Method').fill('stock');
      await page.getByLabel(/Arguments/).fill('["sku-7"]');
      await page.getByRole('button', { name: 'Call' }).click();
      await page.locator('#try-output').waitFor({ timeout: SEE_MS });
      await page.screenshot({ path: path.join(IMAGES, 'dashboard-try.png'), fullPage: true });
      process.stdout.write('docs/images/dashboard-try.png\n');
    } finally {
      await close();
    }
    await shoot('#/service/shop.Inventory/config', 'dashboard-config', '.provider-config');
  } finally {
    stop = true;
    await load;
    await browser.close();
    await dashboard.close();
    await consumer.close();
  }
} finally {
  stop = true;
  await Promise.allSettled(providers.map((p) => p.stop()));
  registry.remove();
}
