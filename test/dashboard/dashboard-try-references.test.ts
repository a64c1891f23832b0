/**
 * What "Try it" leaves behind, however many services the page calls: no consumer record in the shared
 * registry, and at most MAX_TRY_REFERENCES references (with their registry subscriptions and
 * directories) held, the least recently used released; a service the registries do not list is not
 * referred to at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { MAX_TRY_REFERENCES } from '../../src/dashboard/try-call.js';
import { createRegistry, type ProviderRecord, type Registry } from '../../src/registry/index.js';
import { closedPort } from '../cli/support/cli.js';
import { providerEntry } from '../cli/support/file-records.js';
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
let writer: Registry;
const SERVICES = 48;

/** Every consumer record in the file registry, as `service application`. */
function consumerRecords(): string[] {
  const top = path.join(registry.dir, 'callisto');
  const found: string[] = [];
  for (const segment of readdirSync(top)) {
    const dir = path.join(top, segment, 'consumers');
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const record = JSON.parse(readFileSync(path.join(dir, name), 'utf8'));
      found.push(`${record.service} ${record.application}`);
    }
  }
  return found;
}

beforeAll(async () => {
  [provider, writer] = await Promise.all([
    startProvider({ registry: registry.address }),
    createRegistry(registry.address, { ttlMs: 2_000 }),
  ]);
  // services whose one provider is gone (its port is closed): each call fails fast, Network
  const port = await closedPort();
  for (let i = 0; i < SERVICES; i++) {
    await writer.register(providerEntry(`shop.Gone${i}`, port, { methods: ['stock'] }) as ProviderRecord);
  }
  dashboard = await startDashboard({ registries: [registry.address] });
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
  await writer?.close();
  await provider?.kill();
  registry.remove();
});

describe('Try it', () => {
  it('holds a bounded number of references and registers no consumer, however many services it calls', async () => {
    const secret = await pageSecretOf(dashboard.url);
    const tryIt = async (fields: Record<string, unknown>) => {
      const answer = await rawRequest(dashboard.url, '/api/call', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-callisto-page': secret },
        body: JSON.stringify({ method: 'stock', args: '["fig"]', ...fields }),
      });
      expect(answer.status).toBe(200);
      return JSON.parse(answer.body) as { ok: boolean; error?: { code: string } };
    };
    const calls = SERVICES;
    for (let i = 0; i < calls; i++) {
      // another service each time, and the real one with a timeout of its own: each a reference
      expect((await tryIt({ service: `shop.Gone${i}` })).error?.code).toBe('Network');
      expect((await tryIt({ service: 'shop.Inventory', timeoutMs: 1_000 + i })).ok).toBe(true);
    }
    expect(consumerRecords()).toEqual([]);
    // one directory per service at most, of the references kept (fewer than the calls made)
    expect(MAX_TRY_REFERENCES).toBeLessThan(calls);
    expect(appInternals(dashboard.app).consumer.directories().size).toBeLessThanOrEqual(MAX_TRY_REFERENCES);
    // the latest references are the ones kept: the real service still answers
    expect((await tryIt({ service: 'shop.Inventory', timeoutMs: 1_000 + calls - 1 })).ok).toBe(true);
  });

  it('refers to no service the registries do not list', async () => {
    const before = appInternals(dashboard.app).consumer.directories().size;
    const answer = await rawRequest(dashboard.url, '/api/call', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-callisto-page': await pageSecretOf(dashboard.url) },
      body: JSON.stringify({ service: 'shop.Invntory', method: 'stock', args: '[]' }),
    });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error).toMatch(
      /no service named "shop.Invntory".*did you mean shop.Inventory/,
    );
    expect(appInternals(dashboard.app).consumer.directories().size).toBe(before);
    expect(readdirSync(path.join(registry.dir, 'callisto'))).not.toContain('shop.Invntory:1.0.0');
  });
});
