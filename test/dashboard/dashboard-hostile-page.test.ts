/**
 * Other web pages in a real browser (headless Chromium) against a dashboard on this machine without a
 * token: a page served from another loopback address (127.0.0.2) that posts, fetches and submits forms
 * to the dashboard, and a page whose DNS name was re-bound to 127.0.0.1 (Chromium's resolver rules
 * stand in for the attacker's DNS). Neither changes anything nor reads anything.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  type ProviderProcess,
  type RunningDashboard,
  rawRequest,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const EVIL = '127.0.0.1.evil.example';
const registry = tempRegistry();
let browser: Browser;
let provider: ProviderProcess;
let dashboard: RunningDashboard;
let hostile: http.Server;
let hostileUrl: string;

/** The hostile page: every way a page may reach another origin, results in `window.results`. */
const hostilePage = (target: string) => `<!doctype html>
<html><body>
<iframe name="sink"></iframe>
<form id="form" method="POST" action="${target}/api/action" enctype="text/plain" target="sink">
  <input name='{"action":"disable","service":"shop.Inventory","version":"1.0.0","group":"","x":"' value='"}'>
</form>
<script>
const target = ${JSON.stringify(target)};
const disable = JSON.stringify({ action: 'disable', service: 'shop.Inventory', version: '1.0.0', group: '' });
const mock = JSON.stringify({ action: 'mock', service: 'shop.Inventory', version: '1.0.0', group: '', method: 'stock', mode: 'force' });
const attempt = async (name, run) => {
  try { return name + ': ' + (await run()); } catch (error) { return name + ': blocked'; }
};
const sink = document.querySelector('iframe');
// the form's answer loads in the frame (whatever it says, the page cannot read it)
const formSent = new Promise((resolve) => { sink.onload = () => resolve('form text/plain: sent'); });
document.getElementById('form').submit();
window.results = Promise.all([
  formSent,
  attempt('no-cors text/plain', async () => (await fetch(target + '/api/action', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: disable })).type),
  attempt('cors json', async () => (await fetch(target + '/api/action', { method: 'POST', headers: { 'content-type': 'application/json', 'x-callisto-page': 'guess' }, body: mock })).status),
  attempt('no-cors call', async () => (await fetch(target + '/api/call', { method: 'POST', mode: 'no-cors', body: JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '[]' }) })).type),
  attempt('read page', async () => (await (await fetch(target + '/')).text()).length),
  attempt('read config', async () => JSON.stringify(await (await fetch(target + '/api/config?name=shop.Inventory')).json())),
]);
</script>
</body></html>`;

/** What the dashboard says of the service: disabled, and the mock of `stock`. */
async function state(): Promise<{ disabled: boolean; mock: string }> {
  const answer = JSON.parse((await rawRequest(dashboard.url, '/api/service?name=shop.Inventory')).body);
  const key = answer.keys[0];
  return { disabled: key.disabled, mock: key.methods.find((m: { name: string }) => m.name === 'stock').mock };
}

beforeAll(async () => {
  [browser, provider] = await Promise.all([
    launchBrowser([`--host-resolver-rules=MAP ${EVIL} 127.0.0.1`]),
    startProvider({ registry: registry.address }),
  ]);
  dashboard = await startDashboard({ registries: [registry.address] });
  const target = dashboard.url.slice(0, -1);
  hostile = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(hostilePage(target));
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.2', resolve));
  hostileUrl = `http://127.0.0.2:${(hostile.address() as AddressInfo).port}/`;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => hostile?.close(resolve));
  await dashboard?.close();
  await provider?.kill();
  registry.remove();
});

describe('a page from another origin', () => {
  it('can neither change nor read anything on the dashboard', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(hostileUrl);
      const results = await page.evaluate<string[]>('window.results');
      expect(results).toEqual([
        'form text/plain: sent',
        'no-cors text/plain: opaque',
        'cors json: blocked',
        'no-cors call: opaque',
        'read page: blocked',
        'read config: blocked',
      ]);
      expect(await state()).toEqual({ disabled: false, mock: 'off' });
    } finally {
      await context.close();
    }
  });
});

describe('a page whose DNS name was re-bound to this machine', () => {
  it('gets nothing from the dashboard: neither the page, nor its secret, nor a change', async () => {
    // the attacker's script stands in a document of the dashboard's 421 answer, whose content security
    // policy would stop every fetch; a real attacker's page came from its own server, under no policy of
    // the dashboard's: so the policy is bypassed here, and what is tested is what the server answers
    const context = await browser.newContext({ bypassCSP: true });
    try {
      const page = await context.newPage();
      const port = new URL(dashboard.url).port;
      const response = await page.goto(`http://${EVIL}:${port}/`);
      expect(response?.status()).toBe(421);
      // the attacker's script runs on that origin: it reads the page for the secret, then posts
      const outcome = await page.evaluate<{ page: number; action: number; call: number }>(`(async () => {
        const home = await fetch('/');
        const text = await home.text();
        const secret = /name="callisto-page" content="([^"]*)"/.exec(text)?.[1] ?? '';
        const headers = { 'content-type': 'application/json', 'x-callisto-page': secret };
        const action = await fetch('/api/action', { method: 'POST', headers, body: JSON.stringify({ action: 'disable', service: 'shop.Inventory', version: '1.0.0', group: '' }) });
        const call = await fetch('/api/call', { method: 'POST', headers, body: JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '["x"]' }) });
        return { page: home.status, action: action.status, call: call.status };
      })()`);
      expect(outcome).toEqual({ page: 421, action: 421, call: 421 });
      expect(await state()).toEqual({ disabled: false, mock: 'off' });
    } finally {
      await context.close();
    }
  });
});
