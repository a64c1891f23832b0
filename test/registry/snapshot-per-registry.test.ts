/**
 * A snapshot file per registry: a consumer following a service on two registries keeps each registry's
 * last list in a file of its own (named from the address, no secret in the name), and at start each
 * registry that does not answer is stood in for by its own file alone, while the other is followed
 * live. The registries are file registries behind a gate a test closes (`down`): a closed one answers
 * nothing, as a registry whose server is away. Calls go to the providers over real sockets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { createFileRegistry } from '../../src/registry/file-registry.js';
import type { Registry, RegistryAddress } from '../../src/registry/registry.js';
import { parseRegistryAddress } from '../../src/registry/registry-address.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const tempDir = (prefix: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

/** Gates by host name (`gate://a:1?dir=…`): a closed gate's registry never delivers a list. */
const down = new Set<string>();

/** A file registry of `?dir=`, silent while its gate is down. */
const gate = (address: RegistryAddress): Registry => {
  const name = address.hosts[0]!.split(':')[0]!;
  const real = createFileRegistry(parseRegistryAddress(`file://${address.params['dir']}`));
  return new Proxy(real, {
    get(target, property, receiver) {
      if (down.has(name)) {
        if (property === 'subscribe') return async () => () => {};
        if (property === 'watchOverrides') return undefined;
        if (property === 'status') return 'connecting';
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
};

const who = (answer: string) => answer.split(':')[0]!;

/** Every file under `dir`, relative. */
const files = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile());

describe('a snapshot file per registry', () => {
  it('keeps each registry its own file, and restores each on its own when its registry is down at start', async () => {
    down.clear();
    const [dirA, dirB, snapshots] = [tempDir('c23-reg-a-'), tempDir('c23-reg-b-'), tempDir('c23-snap-')];
    // A secret-looking parameter: it must not reach a file name.
    const registries = [`gate://a:1?dir=${dirA}&password=hunter2`, `gate://b:1?dir=${dirB}`];
    for (const [name, dir] of [
      ['pa', dirA],
      ['pb', dirB],
    ] as const) {
      const app = await testApp({ application: name, registry: `file://${dir}` });
      app.provide(FlakyDef, new FlakyImpl(name));
      await app.start();
    }
    const consumerApp = () =>
      testApp({
        application: 'consumer',
        registry: registries,
        startTimeoutMs: 300,
        consumer: { snapshotDir: snapshots, loadbalance: 'roundrobin', warmupMs: 0 },
        extend: (extensions) => extensions.register('registry', 'gate', gate),
      });
    const servedBy = async (ref: { read(key: string): Promise<string> }) => {
      const seen = new Set<string>();
      for (let i = 0; i < 10; i++) seen.add(who(await ref.read(`k${i}`)));
      return [...seen].sort();
    };
    const providersOf = (app: Awaited<ReturnType<typeof consumerApp>>) =>
      [...appInternals(app).consumer.directories().values()][0]?.list().length ?? 0;

    // 1. Both registries up: each registry's list lands in its own file.
    const first = await consumerApp();
    const ref1 = first.refer(FlakyDef);
    await ref1.read('first');
    await waitFor(() => providersOf(first) === 2, 10_000);
    expect(await servedBy(ref1)).toEqual(['pa', 'pb']);
    await first.close();
    const written = files(snapshots).sort();
    expect(written).toHaveLength(2);
    expect(written.every((f) => f.includes('test.Flaky') && f.endsWith('.json'))).toBe(true);
    expect(written.join(' ')).not.toContain('hunter2');
    const listed = (file: string) =>
      (
        JSON.parse(fs.readFileSync(path.join(snapshots, file), 'utf8')) as {
          providers: Array<{ application: string }>;
        }
      ).providers.map((p) => p.application);
    const fileA = written.find((f) => f.startsWith('gate-a'))!;
    const fileB = written.find((f) => f.startsWith('gate-b'))!;
    expect(listed(fileA)).toEqual(['pa']);
    expect(listed(fileB)).toEqual(['pb']);

    // 2. Registry b down at start: a answers live, b's own file stands in for b alone.
    down.add('b');
    const second = await consumerApp();
    const ref2 = second.refer(FlakyDef);
    await ref2.read('first');
    await waitFor(() => providersOf(second) === 2, 10_000);
    expect(await servedBy(ref2)).toEqual(['pa', 'pb']);
    await second.close();
    // b's file is b's list still (not a's, not the merged one)
    expect(listed(fileB)).toEqual(['pb']);

    // 3. Both down: each registry's file restores its own provider.
    down.add('a');
    const third = await consumerApp();
    const ref3 = third.refer(FlakyDef);
    await ref3.read('first');
    await waitFor(() => providersOf(third) === 2, 10_000);
    expect(await servedBy(ref3)).toEqual(['pa', 'pb']);
    down.clear();
  }, 30_000);
});
