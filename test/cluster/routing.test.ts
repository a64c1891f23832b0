/**
 * Which providers a reference reaches, over real sockets: service groups (same name and version,
 * different group) through a registry and on direct addresses, and `direct://` as the app's registry.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { FlakyDef, FlakyImpl, type FlakyService } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyProviders } from '../support/cluster-setup.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const methods = { read: { idempotent: true }, write: {}, budget: {} };
const BlueDef = defineService<FlakyService>('test.Flaky', { group: 'blue', methods });
const GreenDef = defineService<FlakyService>('test.Flaky', { group: 'green', methods });
const who = (answer: string) => answer.split(':')[0]!;

describe('service groups', () => {
  it('keep providers of the same service and version apart, through a registry', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-groups-'));
    dirs.push(dir);
    const registry = `file://${dir}`;
    const start = async (name: string, provide: (app: Awaited<ReturnType<typeof testApp>>) => void) => {
      const app = await testApp({ application: name, registry });
      provide(app);
      await app.start();
      return app;
    };
    await start('blue-1', (app) => app.provide(BlueDef, new FlakyImpl('blue-1')));
    await start('blue-2', (app) => app.provide(BlueDef, new FlakyImpl('blue-2')));
    await start('green-1', (app) => app.provide(GreenDef, new FlakyImpl('green-1')));
    await start('plain', (app) => app.provide(FlakyDef, new FlakyImpl('plain')));
    const consumer = await testApp({ registry, consumer: { snapshotDir: '' } });
    const blue = consumer.refer(BlueDef, { loadbalance: 'roundrobin' });
    const green = consumer.refer(GreenDef);
    const plain = consumer.refer(FlakyDef);
    const blueAnswers = new Set<string>();
    for (let i = 0; i < 10; i++) blueAnswers.add(who(await blue.read(`b${i}`)));
    expect([...blueAnswers].sort()).toEqual(['blue-1', 'blue-2']);
    for (let i = 0; i < 5; i++) expect(who(await green.read(`g${i}`))).toBe('green-1');
    for (let i = 0; i < 5; i++) expect(who(await plain.read(`p${i}`))).toBe('plain');
  });

  it('travel with each call: a provider of another group answers ServiceNotFound', async () => {
    const provider = await testApp({ application: 'both' });
    provider.provide(BlueDef, new FlakyImpl('blue'));
    provider.provide(GreenDef, new FlakyImpl('green'));
    await provider.start();
    const consumer = await testApp();
    expect(await consumer.refer(BlueDef, { url: provider.address! }).read('x')).toBe('blue:x');
    expect(await consumer.refer(GreenDef, { url: provider.address! }).read('x')).toBe('green:x');
    await expect(
      consumer.refer(FlakyDef, { url: provider.address!, retries: 0 }).read('x'),
    ).rejects.toMatchObject({
      code: 'ServiceNotFound',
    });
  });
});

describe('direct:// as the app registry', () => {
  it('sends calls to the listed providers, balanced, with nothing else configured', async () => {
    const providers = await flakyProviders(2);
    // An array: a string in code is split at commas into several registries (one address per host).
    const registry = [`direct://${providers.map((p) => p.address).join(',')}`];
    // A provider may name it too: registering there is a no-op, it starts and serves.
    const alsoProvider = await testApp({ application: 'direct-provider', registry });
    alsoProvider.provide(FlakyDef, new FlakyImpl('direct-provider'));
    await alsoProvider.start();
    const consumer = await testApp({ registry });
    const ref = consumer.refer(FlakyDef, { loadbalance: 'roundrobin' });
    const answers: string[] = [];
    for (let i = 0; i < 6; i++) answers.push(who(await ref.read(`k${i}`)));
    expect(answers.filter((name) => name === 'p0')).toHaveLength(3);
    expect(answers.filter((name) => name === 'p1')).toHaveLength(3);
  });
});
