/**
 * What "Try it" leaves behind, however many services the page names: no consumer record in the shared
 * registry, and at most MAX_TRY_REFERENCES references (with their registry subscriptions and
 * directories) held, the least recently used released.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { MAX_TRY_REFERENCES } from '../../src/dashboard/try-call.js';
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
  provider = await startProvider({ registry: registry.address });
  dashboard = await startDashboard({ registries: [registry.address] });
}, 60_000);

afterAll(async () => {
  await dashboard?.close();
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
    const calls = 48;
    for (let i = 0; i < calls; i++) {
      // a service nobody provides, and the real one with a timeout of its own: each a reference
      expect((await tryIt({ service: `shop.Nothing${i}` })).error?.code).toBe('NoProvider');
      expect((await tryIt({ service: 'shop.Inventory', timeoutMs: 1_000 + i })).ok).toBe(true);
    }
    expect(consumerRecords()).toEqual([]);
    // one directory per service at most, of the references kept (fewer than the calls made)
    expect(MAX_TRY_REFERENCES).toBeLessThan(calls);
    expect(appInternals(dashboard.app).consumer.directories().size).toBeLessThanOrEqual(MAX_TRY_REFERENCES);
    // the latest references are the ones kept: the real service still answers
    expect((await tryIt({ service: 'shop.Inventory', timeoutMs: 1_000 + calls - 1 })).ok).toBe(true);
  });
});
