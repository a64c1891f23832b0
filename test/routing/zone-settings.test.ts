/**
 * Where zones come from: `server.zone` is announced as the provider records' `zone` label (over
 * `server.tags.zone`; a `provide()` tag wins), and is the zone the app's consumers prefer unless
 * `consumer.zone` names another.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { closeAll, testApp } from '../support/apps.js';
import { routedService } from './fixtures/routed-service.js';
import { invocation, KEY } from './support.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const impl = { who: async () => 'x', read: async () => 'x', write: async () => 'x' };

function callerZone(app: Awaited<ReturnType<typeof testApp>>): string {
  const directory = [...appInternals(app).consumer.directories().values()][0]!;
  return directory.explain(invocation()).caller.zone;
}

describe('zones in the configuration', () => {
  it('server.zone labels the provider records, over server.tags.zone; provide() tags win', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-zones-'));
    dirs.push(dir);
    const app = await testApp({
      registry: [`file://${dir}`],
      server: { zone: 'eu-1', tags: { zone: 'ignored', rack: 'r1' } },
    });
    app.provide(routedService('zones.A'), impl);
    app.provide(routedService('zones.B'), impl, { tags: { zone: 'eu-9' } });
    await app.start();
    const records = appInternals(app).provider.records();
    expect(records.find((r) => r.service === 'zones.A')!.tags).toEqual({ zone: 'eu-1', rack: 'r1' });
    expect(records.find((r) => r.service === 'zones.B')!.tags['zone']).toBe('eu-9');
  });

  it("the consumer's zone is consumer.zone, else server.zone", async () => {
    const provider = await testApp();
    provider.provide(routedService(KEY.name), impl);
    await provider.start();
    const zoneOf = async (options: Parameters<typeof testApp>[0]) => {
      const app = await testApp(options);
      const ref = app.refer(routedService(KEY.name), { url: provider.address!, injvm: false });
      await ref.who();
      return callerZone(app);
    };
    expect(await zoneOf({ server: { zone: 'eu-1' } })).toBe('eu-1');
    expect(await zoneOf({ server: { zone: 'eu-1' }, consumer: { zone: 'eu-2' } })).toBe('eu-2');
    expect(await zoneOf({})).toBe('');
  });
});
