/**
 * What keeps other web pages from driving a dashboard on this machine, below the page: the Host check
 * (DNS rebinding: only loopback names and addresses, and the names given), and the page's secret that a
 * change needs when there is no token. Requests made with node's http client, headers exactly as given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ProviderProcess,
  pageSecretOf,
  type RunningDashboard,
  rawRequest,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const registry = tempRegistry();
let provider: ProviderProcess;
let dashboard: RunningDashboard;
let port: string;

const json = { 'content-type': 'application/json' };
const disable = () =>
  JSON.stringify({ action: 'disable', service: 'shop.Inventory', version: '1.0.0', group: '' });
const call = JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '["pear"]' });

/** Whether the page shows the service disabled. */
async function disabled(): Promise<boolean> {
  const answer = await rawRequest(dashboard.url, '/api/service?name=shop.Inventory');
  return JSON.parse(answer.body).keys[0].disabled as boolean;
}

beforeAll(async () => {
  provider = await startProvider({ registry: registry.address });
  dashboard = await startDashboard({ registries: [registry.address] });
  port = new URL(dashboard.url).port;
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await provider?.kill();
  registry.remove();
});

describe('the Host check', () => {
  it('refuses a name that only starts like a loopback address, even with the matching Origin', async () => {
    for (const name of [
      '127.0.0.1.evil.example',
      '127.evil.example',
      'localhost.evil.example',
      '127.0.0.1x',
    ]) {
      const host = `${name}:${port}`;
      const origin = `http://${host}`;
      expect((await rawRequest(dashboard.url, '/', { headers: { host } })).status, name).toBe(421);
      expect(
        (await rawRequest(dashboard.url, '/api/config?name=shop.Inventory', { headers: { host, origin } }))
          .status,
        name,
      ).toBe(421);
      const secret = await pageSecretOf(dashboard.url);
      const post = await rawRequest(dashboard.url, '/api/action', {
        method: 'POST',
        headers: { ...json, host, origin, 'x-callisto-page': secret },
        body: disable(),
      });
      expect(post.status, name).toBe(421);
    }
    expect(await disabled()).toBe(false);
  });

  it('answers to loopback names and addresses, with or without a port', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      '127.1.2.3',
      'LOCALHOST',
    ]) {
      expect((await rawRequest(dashboard.url, '/api/overview', { headers: { host } })).status, host).toBe(
        200,
      );
    }
  });

  it('answers to the names given with allowedHosts, and to no other', async () => {
    const named = await startDashboard({
      registries: [registry.address],
      allowedHosts: ['dash.example.com', 'other.example:8443'],
    });
    try {
      const status = async (host: string) =>
        (await rawRequest(named.url, '/api/overview', { headers: { host } })).status;
      expect(await status('dash.example.com')).toBe(200);
      expect(await status('dash.example.com:7070')).toBe(200);
      expect(await status('other.example:8443')).toBe(200);
      expect(await status('other.example:8444')).toBe(421);
      expect(await status('dash.example.com.evil.example')).toBe(421);
    } finally {
      await named.close();
    }
  });
});

describe("the page's secret", () => {
  it('refuses a change without it (no token): an action and a Try it call', async () => {
    const action = await rawRequest(dashboard.url, '/api/action', {
      method: 'POST',
      headers: json,
      body: disable(),
    });
    expect(action.status).toBe(403);
    expect(JSON.parse(action.body).error).toMatch(/token or its page's secret/);
    const tried = await rawRequest(dashboard.url, '/api/call', { method: 'POST', headers: json, body: call });
    expect(tried.status).toBe(403);
    const wrong = await rawRequest(dashboard.url, '/api/call', {
      method: 'POST',
      headers: { ...json, 'x-callisto-page': 'not-the-secret' },
      body: call,
    });
    expect(wrong.status).toBe(403);
    expect(await disabled()).toBe(false);
  });

  it('takes a change with the secret its page carries', async () => {
    const secret = await pageSecretOf(dashboard.url);
    const tried = await rawRequest(dashboard.url, '/api/call', {
      method: 'POST',
      headers: { ...json, 'x-callisto-page': secret },
      body: call,
    });
    expect(tried.status).toBe(200);
    expect(JSON.parse(tried.body)).toMatchObject({ ok: true, result: { sku: 'pear' } });
  });

  it('is a new one for each dashboard', async () => {
    const other = await startDashboard({ registries: [registry.address] });
    try {
      expect(await pageSecretOf(other.url)).not.toBe(await pageSecretOf(dashboard.url));
      const secret = await pageSecretOf(dashboard.url);
      const tried = await rawRequest(other.url, '/api/call', {
        method: 'POST',
        headers: { ...json, 'x-callisto-page': secret },
        body: call,
      });
      expect(tried.status).toBe(403);
    } finally {
      await other.close();
    }
  });
});

describe('a read-only dashboard', () => {
  it('refuses actions and calls, with the secret too, and still shows', async () => {
    const viewer = await startDashboard({ registries: [registry.address], readOnly: true });
    try {
      const secret = await pageSecretOf(viewer.url);
      for (const path of ['/api/action', '/api/call']) {
        const answer = await rawRequest(viewer.url, path, {
          method: 'POST',
          headers: { ...json, 'x-callisto-page': secret },
          body: path === '/api/call' ? call : disable(),
        });
        expect(answer.status, path).toBe(403);
        expect(JSON.parse(answer.body).error).toMatch(/read-only/);
      }
      expect((await rawRequest(viewer.url, '/api/overview')).status).toBe(200);
      // its page offers neither (views/service.js reads the mark)
      expect((await rawRequest(viewer.url, '/')).body).toContain('<html lang="en" data-read-only>');
      expect((await rawRequest(dashboard.url, '/')).body).toContain('<html lang="en">');
    } finally {
      await viewer.close();
    }
  });
});
