/**
 * The dashboard's methods table shows each method's min, mean and max latency over its providers'
 * latest window (from their `/stats`), and the last failure with the reference its caller was quoted,
 * in Chromium. The provider is an app in this process, with admin endpoints, on a file registry.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallistoApp, callisto, defineService } from '../../src/index.js';
import {
  launchBrowser,
  openPage,
  type RunningDashboard,
  SEE_MS,
  startDashboard,
  tempRegistry,
} from './support/dashboard-env.js';

interface Clock {
  wait(ms: number): Promise<number>;
  disk(): Promise<void>;
}
const ClockDef = defineService<Clock>('lab.Clock', { version: '1.0.0', methods: { wait: {}, disk: {} } });

const registry = tempRegistry();
let browser: Browser;
let provider: CallistoApp;
let consumer: CallistoApp;
let dashboard: RunningDashboard;
let quoted: string;

const quiet = { logLevel: 'silent' as const, load: { configFile: false as const, env: false as const } };

beforeAll(async () => {
  browser = await launchBrowser();
  provider = await callisto({
    application: 'clock',
    registry: [registry.address],
    registryTtlMs: 2_000,
    admin: { enabled: true },
    ...quiet,
  });
  provider.provide(ClockDef, {
    async wait(ms: number) {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return ms;
    },
    async disk() {
      throw Object.assign(new Error('EIO: i/o error, read'), { errno: -5, code: 'EIO', syscall: 'read' });
    },
  });
  await provider.start();
  consumer = await callisto({ application: 'front', ...quiet });
  await consumer.start();
  const clock = consumer.refer(ClockDef, { url: provider.address!, timeoutMs: 5_000 });
  for (const ms of [30, 150, 60]) await clock.wait(ms);
  const error = (await clock.disk().catch((e: unknown) => e)) as Error;
  quoted = /under ref (\S+)\)/.exec(error.message)![1]!;
  dashboard = await startDashboard({ registries: [registry.address] });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await consumer?.close();
  await provider?.close();
  registry.remove();
});

describe('the methods table', () => {
  it("shows each method's min / mean / max latency of the window, and the last failure's reference", async () => {
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/lab.Clock`);
    try {
      const figures = page.locator('table.methods tbody tr', { hasText: 'wait' }).locator('.latency-window');
      await figures.waitFor({ timeout: SEE_MS });
      const read = async (name: string) => Number(await figures.getAttribute(`data-${name}`));
      const [min, mean, max] = [await read('min'), await read('mean'), await read('max')];
      expect(min).toBeGreaterThanOrEqual(29);
      expect(max).toBeGreaterThanOrEqual(149);
      expect(mean).toBeGreaterThan(min);
      expect(mean).toBeLessThan(max);
      expect(await figures.textContent()).toMatch(/^\d+(\.\d+)? \/ \d+(\.\d+)? \/ \d+(\.\d+)? ms$/);
      expect(await figures.getAttribute('title')).toContain('3 calls in a window of 60 s');
      const failure = page.locator('table.methods tbody tr', { hasText: 'disk' }).locator('.failure');
      await failure.getByText(`ref ${quoted}`).waitFor({ timeout: SEE_MS });
      expect(await failure.textContent()).toContain('ProviderError');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });
});
