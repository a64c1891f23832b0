/**
 * A reference made for passing calls (a tool calling services by name): `registerConsumer: false`
 * leaves no consumer record in the registry, and `releaseReference()` lets go of the service's
 * directory (its registry subscription, its consumer record) once no other reference holds it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { RpcError, releaseReference } from '../../src/index.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-release-'));
  dirs.push(dir);
  const registry = `file://${dir}`;
  const provider = await testApp({ application: 'flaky', registry: [registry], registryTtlMs: 3_000 });
  provider.provide(FlakyDef, new FlakyImpl('p'));
  await provider.start();
  const consumer = await testApp({
    application: 'tool',
    registry: [registry],
    consumer: { snapshotDir: '' },
  });
  /** The consumer records of test.Flaky in the registry's files. */
  const records = () => {
    try {
      return fs.readdirSync(path.join(dir, 'callisto', 'test.Flaky:1.0.0', 'consumers'));
    } catch {
      return [];
    }
  };
  return { consumer, records, directories: () => appInternals(consumer).consumer.directories() };
}

describe('references for passing calls', () => {
  it('registerConsumer: false calls without writing a consumer record', async () => {
    const { consumer, records } = await setup();
    const quiet = consumer.refer(FlakyDef, { registerConsumer: false });
    expect(await quiet.read('a')).toBe('p:a');
    expect(records()).toEqual([]);
    // an ordinary reference of the same service does announce itself (the check can see one)
    const announced = consumer.refer(FlakyDef);
    expect(await announced.read('b')).toBe('p:b');
    await waitFor(() => records().length === 1 || undefined, 5_000);
  });

  it('releaseReference closes the directory when the last holder lets go, and refuses calls after', async () => {
    const { consumer, records, directories } = await setup();
    const first = consumer.refer(FlakyDef);
    const second = consumer.refer(FlakyDef, { timeoutMs: 2_000 });
    expect(await first.read('a')).toBe('p:a');
    expect(await second.read('b')).toBe('p:b');
    await waitFor(() => records().length === 1 || undefined, 5_000);
    expect(directories().size).toBe(1);

    await releaseReference(first);
    expect(directories().size).toBe(1);
    expect(await second.read('c')).toBe('p:c');
    const refused = await first.read('d').catch((error: unknown) => error);
    expect(RpcError.is(refused) && refused.code).toBe('Shutdown');

    await releaseReference(second);
    await releaseReference(second);
    expect(directories().size).toBe(0);
    expect(records()).toEqual([]);
    await expect(releaseReference({})).rejects.toThrow(TypeError);
  });
});
