/**
 * The dashboard's HTTP side, below the page: the token, the body limit, the checks that keep other web
 * pages and re-bound DNS names out, what is served and what is not, and its options' mistakes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardOptionError, resolveDashboardOptions } from '../../src/dashboard/index.js';
import {
  type ProviderProcess,
  type RequestOptions,
  type RunningDashboard,
  rawRequest,
  startDashboard,
  startProvider,
  tempRegistry,
} from './support/dashboard-env.js';

const TOKEN = 'correct-horse-battery';
const registry = tempRegistry();
let dashboard: RunningDashboard;
let provider: ProviderProcess;

const request = (path: string, options?: RequestOptions) => rawRequest(dashboard.url, path, options);

const bearer = { authorization: `Bearer ${TOKEN}` };
const json = { 'content-type': 'application/json', ...bearer };

beforeAll(async () => {
  provider = await startProvider({ registry: registry.address });
  dashboard = await startDashboard({ registries: [registry.address], token: TOKEN, maxBodyBytes: 8 * 1024 });
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await provider?.kill();
  registry.remove();
});

describe('the dashboard API', () => {
  it('answers only with the token, compared whole', async () => {
    const none = await request('/api/overview');
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({ error: 'this dashboard needs its token' });
    expect(
      (await request('/api/overview', { headers: { authorization: 'Bearer wrong-token-here' } })).status,
    ).toBe(401);
    expect((await request('/api/overview', { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(
      401,
    );
    expect((await request('/api/overview', { headers: { authorization: TOKEN } })).status).toBe(401);
    const good = await request('/api/overview', { headers: bearer });
    expect(good.status).toBe(200);
    expect(JSON.parse(good.body).services.map((s: { name: string }) => s.name)).toEqual(['shop.Inventory']);
  });

  it('serves the page itself without the token (it carries no data), with a strict content policy', async () => {
    const page = await request('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('<script type="module" src="/assets/app.js">');
    expect((await request('/assets/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await request('/assets/views/service.js')).status).toBe(200);
  });

  it('serves nothing but its own files', async () => {
    for (const path of [
      '/assets/../dashboard-options.ts',
      '/assets/..%2fdashboard-options.ts',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/package.json',
      '/assets/missing.js',
    ]) {
      expect((await request(path)).status, path).toBe(404);
    }
    expect((await request('/api/nothing', { headers: bearer })).status).toBe(404);
  });

  it('refuses a body past its limit, whether announced or streamed, and keeps serving', async () => {
    const args = JSON.stringify(['x'.repeat(20 * 1024)]);
    const body = JSON.stringify({ service: 'shop.Inventory', method: 'stock', args });
    const announced = await request('/api/call', { method: 'POST', headers: json, body });
    expect(announced.status).toBe(413);
    expect(JSON.parse(announced.body)).toEqual({ error: 'the request is larger than 8192 bytes' });
    const streamed = await request('/api/call', { method: 'POST', headers: json, body, chunked: true });
    expect(streamed.status).toBe(413);
    const small = await request('/api/call', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '["pear"]' }),
    });
    expect(JSON.parse(small.body)).toMatchObject({ ok: true, result: { sku: 'pear', count: 28 } });
  });

  it('refuses what another web page could send: a foreign Origin, a non-JSON body, a re-bound host name', async () => {
    const body = JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '["pear"]' });
    const foreign = await request('/api/call', {
      method: 'POST',
      headers: { ...json, origin: 'http://evil.example' },
      body,
    });
    expect(foreign.status).toBe(403);
    const plain = await request('/api/call', {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'text/plain' },
      body,
    });
    expect(plain.status).toBe(415);
    const port = new URL(dashboard.url).port;
    const rebound = await request('/api/overview', { headers: { ...bearer, host: `evil.example:${port}` } });
    expect(rebound.status).toBe(421);
    const same = await request('/api/call', {
      method: 'POST',
      headers: { ...json, origin: dashboard.url.slice(0, -1) },
      body,
    });
    expect(same.status).toBe(200);
  });

  it('names what is wrong with a call request', async () => {
    const call = async (fields: Record<string, unknown>) => {
      const answer = await request('/api/call', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ service: 'shop.Inventory', method: 'stock', args: '[]', ...fields }),
      });
      return { status: answer.status, ...JSON.parse(answer.body) };
    };
    expect(await call({ args: 7 })).toEqual({
      status: 400,
      error: '"args" must be the arguments as JSON text',
    });
    expect(await call({ method: 'no such' })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/not a service and method name/),
    });
    expect(await call({ timeoutMs: 0 })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/"timeoutMs" must be an integer from 1 to 60000/),
    });
    expect(await call({ args: '[{"$t": "D", "v": "yesterday"}]' })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/^the arguments: /),
    });
    const notJson = await request('/api/call', { method: 'POST', headers: json, body: '{"service":' });
    expect(notJson.status).toBe(400);
  });

  it('refuses an action it cannot do as asked, saying why, and changes nothing', async () => {
    const act = async (fields: Record<string, unknown>) => {
      const answer = await request('/api/action', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ service: 'shop.Inventory', version: '1.0.0', group: '', ...fields }),
      });
      return { status: answer.status, ...JSON.parse(answer.body) };
    };
    expect(await act({ action: 'disable', provider: '127.0.0.1:1' })).toEqual({
      status: 400,
      error: '127.0.0.1:1 is not a provider of shop.Inventory 1.0.0',
    });
    expect(await act({ action: 'weight', provider: provider.address, weight: 10_001 })).toEqual({
      status: 400,
      error: 'the weight must be an integer from 0 to 10000',
    });
    expect(await act({ action: 'weight', weight: 5 })).toMatchObject({
      status: 400,
      error: expect.stringMatching(/give "provider"/),
    });
    expect(await act({ action: 'mock', method: 'stock', mode: 'sometimes' })).toMatchObject({
      status: 400,
      error: '"mode" must be one of force, fail, off',
    });
    expect(await act({ action: 'shutdown' })).toMatchObject({ status: 400 });
    expect(await act({ action: 'disable', service: 'shop.Nothing' })).toMatchObject({ status: 404 });
    const service = await request('/api/service?name=shop.Inventory', { headers: bearer });
    const key = JSON.parse(service.body).keys[0];
    expect(key.disabled).toBe(false);
    expect(
      key.providers.map((p: { state: string; weight: number }) => [p.state === 'disabled', p.weight]),
    ).toEqual([[false, 100]]);
  });
});

describe('dashboard options', () => {
  it('fail at start, naming the option and what was expected', () => {
    expect(() => resolveDashboardOptions({ registries: [] })).toThrow(
      'invalid dashboard option registries = []: expected at least one registry address',
    );
    expect(() => resolveDashboardOptions({ registries: ['file:///x'], token: 'short' })).toThrow(
      DashboardOptionError,
    );
    expect(() => resolveDashboardOptions({ registries: ['file:///x'], port: 70_000 })).toThrow(
      'invalid dashboard option port = 70000: expected an integer from 0 to 65535',
    );
    expect(resolveDashboardOptions({ registries: ['file:///x'] })).toMatchObject({
      host: '127.0.0.1',
      port: 7070,
    });
  });
});
