/**
 * What a dashboard test runs, all real: provider processes (fixtures/provider.ts) on a file registry of
 * the test's own, the dashboard (createDashboard, in this process, on a free port) with a Callisto app
 * for its calls, and headless Chromium (Debian's, through playwright-core) to look at it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { createDashboard, type Dashboard, type DashboardOptions } from '../../../src/dashboard/index.js';
import type { RegistryControl } from '../../../src/dashboard/sources.js';
import { type CallistoApp, callisto, defineService } from '../../../src/index.js';
import { type ProviderProcess, startProviderScript } from '../../cli/support/cli.js';

const PROVIDER = fileURLToPath(new URL('../fixtures/provider.ts', import.meta.url));
export const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** How long a test waits for what the page should show: generous, the machine is shared. */
export const SEE_MS = 20_000;

export function tempRegistry(): { address: string; dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-dashboard-'));
  return { address: `file://${dir}`, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Graceful `stop()` resolves with the calls it served; after `kill()` its entry stays until its TTL (2 s). */
export type { ProviderProcess } from '../../cli/support/cli.js';

export interface ProviderOptions {
  registry?: string;
  /** Several registries at once (instead of `registry`). */
  registries?: string[];
  application?: string;
  weight?: number;
  admin?: boolean;
  /** `server.adaptiveLimitInitial`. */
  adaptiveLimitInitial?: number;
}

export function startProvider(options: ProviderOptions): Promise<ProviderProcess> {
  return startProviderScript(PROVIDER, options);
}

export interface RunningDashboard {
  readonly url: string;
  readonly dashboard: Dashboard;
  readonly app: CallistoApp;
  close(): Promise<void>;
}

export async function startDashboard(
  options: Omit<DashboardOptions, 'port'>,
  control?: (address: string) => RegistryControl,
): Promise<RunningDashboard> {
  const app = await callisto({
    application: 'callisto-dashboard',
    registry: [...options.registries],
    registryTtlMs: 2_000,
    consumer: { snapshotDir: '' },
    logLevel: 'error',
    load: { configFile: false, env: false },
  });
  try {
    const dashboard = await createDashboard({ refreshMs: 500, ...options, port: 0 }, { app, control });
    // the registries read once: what the tests registered before is on the first page
    await dashboard.watch.ready;
    return {
      url: dashboard.url,
      dashboard,
      app,
      async close() {
        await dashboard.close();
        await app.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** Headless Chromium; `args` adds command-line switches (e.g. `--host-resolver-rules=…`). */
export async function launchBrowser(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', ...args],
  });
}

/** A page at 1280×800 whose console errors and failed requests fail the test that reads `problems`. */
export async function openPage(browser: Browser, url: string, size = { width: 1280, height: 800 }) {
  const context = await browser.newContext({ viewport: size });
  const page: Page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/401|404|400|413/.test(message.text())) {
      problems.push(`console: ${message.text()}`);
    }
  });
  await page.goto(url);
  return { page, problems, close: () => context.close() };
}

/** What goes wrong on `page` from now on: its errors, failed requests, and answers of 400 and up. */
export function pageTrouble(page: Page): string[] {
  const trouble: string[] = [];
  page.on('pageerror', (error) => trouble.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') trouble.push(`console: ${message.text()}`);
  });
  page.on('requestfailed', (request) =>
    trouble.push(`${request.method()} ${request.url()} failed: ${request.failure()?.errorText}`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400) trouble.push(`${response.status()} for ${response.url()}`);
  });
  return trouble;
}

/**
 * Waits until `locator` is visible; when it is not in time, fails with what the page shows and what
 * `trouble` (pageTrouble) saw go wrong, rather than with a bare timeout.
 */
export async function see(locator: Locator, trouble: readonly string[], timeout = SEE_MS): Promise<void> {
  try {
    await locator.waitFor({ timeout });
  } catch (error) {
    const page = locator.page();
    const shown = await page
      .locator('body')
      .textContent()
      .catch((reason: unknown) => `(unreadable: ${String(reason)})`);
    throw new Error(
      `${String((error as Error).message).split('\n')[0]}\nat ${page.url()} the page shows: ${(shown ?? '').slice(0, 800)}\n` +
        `what went wrong on it: ${trouble.join('; ') || 'nothing reported'}`,
    );
  }
}

/** shop.Inventory as a consumer sees it (fixtures/provider.ts). */
export interface Inventory {
  stock(sku: string): Promise<{ sku: string; count: number }>;
  broken(): Promise<never>;
  served(): Promise<number>;
}

export const InventoryDef = defineService<Inventory>('shop.Inventory', { version: '1.0.0' });

/** A consumer app of the test's own on the registry, round robin over the providers. */
export async function startConsumer(registry: string) {
  const app = await callisto({
    application: 'storefront',
    registry: [registry],
    registryTtlMs: 2_000,
    consumer: { snapshotDir: '', loadbalance: 'roundrobin' },
    logLevel: 'silent',
    load: { configFile: false, env: false },
  });
  const inventory = app.refer(InventoryDef);
  /** How many calls a provider has served, asked of it directly (not through the registry's choices). */
  const servedBy = (address: string) => app.refer(InventoryDef, { url: address }).served();
  return { app, inventory, servedBy };
}

/**
 * Calls `call` one after another until stopped, at most `maxCalls` times or `maxMs` long (a load that
 * always ends by itself).
 */
export function runLoad(call: () => Promise<unknown>, maxCalls = 50_000, maxMs = 90_000) {
  let stopped = false;
  let calls = 0;
  let failures = 0;
  const until = Date.now() + maxMs;
  const done = (async () => {
    while (!stopped && calls < maxCalls && Date.now() < until) {
      calls++;
      await call().catch(() => {
        failures++;
      });
      if (calls % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  return {
    get calls() {
      return calls;
    },
    get failures() {
      return failures;
    },
    async stop() {
      stopped = true;
      await done;
    },
  };
}

export interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export interface RequestOptions {
  method?: string;
  /** Sent as given: `host` replaces the one of `base`. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent in pieces without a length (the size is only known as the bytes arrive). */
  chunked?: boolean;
  /** For https: the CA to trust, and a client certificate with its key (PEM). */
  ca?: string;
  cert?: string;
  key?: string;
}

/** One request to `base` (the dashboard's address) with exactly these headers (fetch would not let a test set Host). */
export function rawRequest(base: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const url = new URL(base);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      {
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: { host: url.host, ...options.headers },
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            headers: res.headers,
          }),
        );
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) {
      if (options.chunked) {
        const body = Buffer.from(options.body);
        for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      } else req.write(options.body);
    }
    req.end();
  });
}

/** The secret the dashboard wrote into its page (what the page's script sends with a change). */
export async function pageSecretOf(base: string): Promise<string> {
  const page = await rawRequest(base, '/');
  const secret = /<meta name="callisto-page" content="([^"]*)"/.exec(page.body)?.[1];
  if (!secret) throw new Error(`no page secret in the page of ${base} (status ${page.status})`);
  return secret;
}
