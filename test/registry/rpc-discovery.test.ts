/**
 * Discovery end to end: providers announce themselves through real registries, consumers find them,
 * call them, and appear in the registry's consumers list.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-discovery-'));
  dirs.push(dir);
  return dir;
}

async function provider(name: string, registry: string[]) {
  const app = await testApp({ application: name, registry, registryTtlMs: 3_000 });
  app.provide(FlakyDef, new FlakyImpl(name));
  await app.start();
  return app;
}

describe('discovery through registries', () => {
  it('merges several registries: a provider on both is listed once, one on either is found', async () => {
    const a = `file://${tempDir()}`;
    const b = `file://${tempDir()}`;
    await provider('both', [a, b]);
    await provider('only-b', [b]);
    const consumer = await testApp({ registry: [a, b], consumer: { snapshotDir: tempDir() } });
    const ref = consumer.refer(FlakyDef, { loadbalance: 'roundrobin' });
    const seen = new Set<string>();
    await waitFor(async () => {
      seen.add((await ref.read('x')).split(':')[0]!);
      return seen.size === 2;
    }, 10_000);
    const source = [...appInternals(consumer).consumer.directories().values()][0]!;
    expect(source.list()).toHaveLength(2);
  });

  it('announces the consumer under consumers/<host>:<pid>:<n>, readable with the engine tools', async () => {
    const redisAddress = sharedServerAddress('redis');
    const registry = `redis://${redisAddress}?root=/callisto-discovery-${process.pid}`;
    await provider('redis-provider', [registry]);
    const consumer = await testApp({
      application: 'shop',
      registry: [registry],
      consumer: { snapshotDir: '' },
    });
    const ref = consumer.refer(FlakyDef);
    expect(await ref.read('k')).toBe('redis-provider:k');
    const [host, port] = redisAddress.split(':');
    const redis = new Redis({ host, port: Number(port), lazyConnect: true });
    await redis.connect();
    try {
      const pattern = `/callisto-discovery-${process.pid}/test.Flaky:1.0.0/consumers/*`;
      await waitFor(async () => (await redis.keys(pattern)).length === 1);
      const [key] = await redis.keys(pattern);
      expect(key).toMatch(new RegExp(`/consumers/${os.hostname()}:${process.pid}:\\d+$`));
      expect(JSON.parse((await redis.get(key!))!)).toMatchObject({
        application: 'shop',
        service: 'test.Flaky',
      });
      await consumer.close();
      await waitFor(async () => (await redis.keys(pattern)).length === 0);
    } finally {
      redis.disconnect();
    }
  });
});
