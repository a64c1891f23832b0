/**
 * Registry records that would skew or break a consumer, end to end over real sockets:
 *
 * - a record claiming weight 1e308 and no start time (so it would skip warm-up) does not take the
 *   traffic: its weight is clamped and it counts as just started;
 * - a record whose port makes `net.connect` throw (only a registry kind that does not check its records
 *   can deliver one) costs no call: the failure is Network, never sent, and fails over for any method.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, RpcError } from '../../src/index.js';
import { servicePathSegment } from '../../src/registry/provider-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { fileRawStore } from './fixtures/raw-store.js';
import { providerRecord } from './fixtures/records.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await closeAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serving(name: string): Promise<CallistoApp> {
  const app = await testApp({ application: name });
  app.provide(FlakyDef, new FlakyImpl(name));
  return app.start();
}

describe('records that would skew or break a consumer', () => {
  it('a huge weight without a start time does not take the traffic', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callisto-record-rules-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = fileRawStore(dir);
    cleanups.push(() => store.close());
    const [steady, greedy] = [await serving('steady'), await serving('greedy')];
    const providers = `/callisto/${servicePathSegment(FlakyDef)}/providers`;
    const hourAgo = Date.now() - 3_600_000;
    await store.put(
      `${providers}/${steady.address}`,
      JSON.stringify(providerRecord(FlakyDef, steady.port!, { startTime: hourAgo })),
    );
    const { startTime: _none, ...noStartTime } = providerRecord(FlakyDef, greedy.port!, { weight: 1e308 });
    await store.put(`${providers}/${greedy.address}`, JSON.stringify(noStartTime));

    const consumer = await testApp({ registry: `file://${dir}`, consumer: { snapshotDir: '' } });
    const ref = consumer.refer(FlakyDef); // random balancer, 10 min warm-up
    const counts: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const who = (await ref.read(String(i))).split(':')[0]!;
      counts[who] = (counts[who] ?? 0) + 1;
    }
    // just started: weight 1 of 10000 while warming up, against 100 (about 1 %)
    expect(counts['greedy'] ?? 0).toBeLessThan(40);
    expect(counts['steady']).toBeGreaterThan(360);
  });

  it('a port net.connect refuses to even try fails over for a method that is not idempotent', async () => {
    const real = await serving('real');
    const broken = providerRecord(FlakyDef, 70_000);
    const good = providerRecord(FlakyDef, real.port!);
    // a user registry kind: the records it delivers are not checked by the built-in shell
    const unchecked: Registry = {
      kind: 'unchecked',
      status: 'connected',
      async register() {},
      async unregister() {},
      async registerConsumer() {},
      async unregisterConsumer() {},
      async subscribe(_key, listener) {
        listener([broken, good]);
        return () => {};
      },
      onStatus: () => () => {},
      async close() {},
    };
    const consumer = await testApp({
      registry: 'unchecked://somewhere:1',
      consumer: { snapshotDir: '', loadbalance: 'roundrobin', outlierDetection: false },
      extend: (extensions) => extensions.register('registry', 'unchecked', () => unchecked),
    });
    const ref = consumer.refer(FlakyDef);
    for (let i = 0; i < 30; i++) expect(await ref.write(String(i))).toBe(`real:${i}`);

    const failure = await appInternals(consumer)
      .consumer.pool.handle('127.0.0.1', 99_999) // an address the calls above did not use
      .connection()
      .call({ prefix: Buffer.alloc(0), serializer: undefined as never, label: 'x' }, [])
      .then(
        () => undefined,
        (error: unknown) => RpcError.from(error),
      );
    expect(failure).toMatchObject({ code: 'Network', neverSent: true });
    expect(failure?.message).toMatch(/cannot connect to 127\.0\.0\.1:99999: .*99999/);
  });
});
