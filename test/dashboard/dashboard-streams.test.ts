/**
 * The dashboard's methods table shows the streams open now per method (from the providers' `/stats`),
 * in Chromium (and the declaration names the stream kind): two server streams held open show 2 on the stream method's row, the unary method's row
 * shows none, and once the caller stops them the row shows 0. The provider is an app in this process,
 * with admin endpoints, on a file registry.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallistoApp, callisto, defineService, type Remote } from '../../src/index.js';
import {
  launchBrowser,
  openPage,
  type RunningDashboard,
  SEE_MS,
  startDashboard,
  tempRegistry,
} from './support/dashboard-env.js';

interface Feed {
  watch(everyMs: number): AsyncIterable<number>;
  ping(): Promise<string>;
}
const FeedDef = defineService<Feed>('lab.Feed', {
  version: '1.0.0',
  methods: { watch: { stream: 'server' }, ping: {} },
});

const registry = tempRegistry();
let browser: Browser;
let provider: CallistoApp;
let consumer: CallistoApp;
let feed: Remote<Feed>;
let dashboard: RunningDashboard;

const quiet = { logLevel: 'silent' as const, load: { configFile: false as const, env: false as const } };

beforeAll(async () => {
  browser = await launchBrowser();
  provider = await callisto({
    application: 'feed',
    registry: [registry.address],
    registryTtlMs: 2_000,
    admin: { enabled: true },
    ...quiet,
  });
  provider.provide(FeedDef, {
    async *watch(everyMs: number) {
      for (let n = 0; ; n++) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        yield n;
      }
    },
    async ping() {
      return 'pong';
    },
  });
  await provider.start();
  consumer = await callisto({ application: 'front', ...quiet });
  await consumer.start();
  feed = consumer.refer(FeedDef, { url: provider.address! });
  await feed.ping();
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
  it('shows the streams open now per method', async () => {
    const streams = [feed.watch(20)[Symbol.asyncIterator](), feed.watch(20)[Symbol.asyncIterator]()];
    for (const stream of streams) await stream.next();
    const { page, problems, close } = await openPage(browser, `${dashboard.url}#/service/lab.Feed`);
    try {
      const row = (name: string) => page.locator('table.methods tbody tr', { hasText: name });
      await row('watch').locator('.open-streams[data-open="2"]').waitFor({ timeout: SEE_MS });
      expect(await row('watch').locator('.open-streams').textContent()).toBe('2');
      expect(await row('ping').locator('.open-streams').count()).toBe(0);
      // the declaration says what kind of stream
      expect(await row('watch').textContent()).toContain('server stream');
      expect(await row('ping').textContent()).not.toContain('stream');
      for (const stream of streams) await stream.return!();
      await row('watch').locator('.open-streams[data-open="0"]').waitFor({ timeout: SEE_MS });
      expect(problems).toEqual([]);
    } finally {
      for (const stream of streams) await stream.return?.();
      await close();
    }
  });
});
