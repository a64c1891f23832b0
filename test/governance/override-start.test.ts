/**
 * A consumer that starts while an override is in force applies it before its first call, even when the
 * override record answers later than the provider list: discovery waits for the first read of the
 * overrides (bounded by startTimeoutMs).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createFileRegistry } from '../../src/registry/file-registry.js';
import { emptyOverrides } from '../../src/registry/override-record.js';
import type { Registry } from '../../src/registry/registry.js';
import { parseRegistryAddress } from '../../src/registry/registry-address.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

it('routes no call to a disabled provider while the override record is still being read', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-override-start-'));
  dirs.push(dir);
  const address = `file://${dir}`;
  const providers = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const impl = new FlakyImpl(name);
      const app = await testApp({ application: name, registry: [address] });
      app.provide(FlakyDef, impl);
      await app.start();
      return { impl, address: app.address! };
    }),
  );
  const writer = createFileRegistry(parseRegistryAddress(address));
  await writer.writeOverrides!(FlakyDef, { ...emptyOverrides(), disabledProviders: [providers[1]!.address] });
  await writer.close();

  // the consumer's registry: the file registry, with its override reads held until released
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let overrideReads = 0;
  let listed = 0;
  const slow = (): Registry => {
    const real = createFileRegistry(parseRegistryAddress(address));
    return new Proxy(real, {
      get(target, property, receiver) {
        if (property === 'watchOverrides') {
          return async (...args: Parameters<NonNullable<Registry['watchOverrides']>>) => {
            overrideReads++;
            await held;
            return target.watchOverrides!(...args);
          };
        }
        if (property === 'subscribe') {
          return (...[key, listener]: Parameters<Registry['subscribe']>) =>
            target.subscribe(key, (records) => {
              listed = records.length;
              listener(records);
            });
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
  const consumer = await testApp({
    registry: 'slow://here:1',
    consumer: { snapshotDir: '', loadbalance: 'roundrobin' },
    extend: (extensions) => extensions.register('registry', 'slow', slow),
  });
  const ref = consumer.refer(FlakyDef);
  const calls = Array.from({ length: 20 }, (_, i) => ref.read(String(i)));
  // the provider list is delivered while the overrides are held; the calls get 100 ms to go wrong
  await waitFor(() => overrideReads > 0 && listed === 2);
  await new Promise((resolve) => setTimeout(resolve, 100));
  release();
  const answers = await Promise.all(calls);
  expect(answers.every((answer) => answer.startsWith('a:'))).toBe(true);
  expect(providers[1]!.impl.reads).toBe(0);
});
