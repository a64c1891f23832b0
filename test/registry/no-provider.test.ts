/**
 * NoProvider says why, over real registries: the key asked for (version, group), each registry asked
 * (file:// with its resolved directory), its state, and what it holds under the service's name. A
 * version mismatch, a group mismatch, another directory and a broken registry read differently. What
 * the registries hold is looked up when an error is built, rate-limited, never per call.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, RpcError } from '../../src/index.js';
import { createFileRegistry } from '../../src/registry/file-registry.js';
import type { Registry } from '../../src/registry/registry.js';
import { FlakyImpl, type FlakyService } from '../fixtures/flaky-service.js';
import { freePort } from '../setup/servers.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { closeAll, testApp } from '../support/apps.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await closeAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-no-provider-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const methods = { read: { idempotent: true }, write: {}, budget: {} } as const;
const service = (name: string, version: string, group?: string) =>
  defineService<FlakyService>(name, { version, ...(group ? { group } : {}), methods });

async function provide(registry: string, name: string, version: string, group?: string): Promise<void> {
  const app = await testApp({ application: `${name}-${version}-${group}`, registry, registryTtlMs: 3_000 });
  app.provide(service(name, version, group), new FlakyImpl('p'));
  await app.start();
}

/** The NoProvider error of one call to `name` (version, group) through `registry`. */
async function noProvider(
  registry: string,
  name: string,
  version: string,
  group?: string,
): Promise<RpcError> {
  const consumer = await testApp({ registry, consumer: { snapshotDir: '' }, startTimeoutMs: 1_000 });
  const error = await consumer
    .refer(service(name, version, group))
    .read('x')
    .then(
      () => undefined,
      (failure: unknown) => RpcError.from(failure),
    );
  expect(error?.code).toBe('NoProvider');
  return error!;
}

const engines = {
  file: () => `file://${tempDir()}`,
  etcd: () => `etcd://${sharedServerAddress('etcd')}`,
  zookeeper: () => `zookeeper://${sharedServerAddress('zookeeper')}`,
  redis: () => `redis://${sharedServerAddress('redis')}`,
};

describe('NoProvider says why', () => {
  for (const [kind, address] of Object.entries(engines)) {
    describe(kind, () => {
      it('a version mismatch: the versions registered', async () => {
        const registry = address();
        const name = `np.${kind}.V${randomUUID().slice(0, 8)}`;
        await provide(registry, name, '1.0.0');
        await provide(registry, name, '1.1.0');
        const error = await noProvider(registry, name, '2.0.0');
        expect(error.message).toContain(`(service ${name}, version 2.0.0, no group)`);
        expect(error.message).toContain('registered versions: 1.0.0, 1.1.0');
        expect(error.message).toMatch(/\((connected|connecting)\): registered/);
        expect(error.details).toMatchObject({ service: name, version: '2.0.0', group: '' });
      });

      it('a group mismatch: the groups registered', async () => {
        const registry = address();
        const name = `np.${kind}.G${randomUUID().slice(0, 8)}`;
        await provide(registry, name, '1.0.0', 'a');
        await provide(registry, name, '1.0.0', 'b');
        const error = await noProvider(registry, name, '1.0.0');
        expect(error.message).toContain('groups: a, b');
        expect(error.message).not.toContain('registered versions');
        const asking = await noProvider(registry, name, '1.0.0', 'c');
        expect(asking.message).toContain(`(service ${name}, version 1.0.0, group c)`);
        expect(asking.message).toContain('groups: a, b');
      });
    });
  }

  it('another directory: the resolved path, holding nothing for the service', async () => {
    const elsewhere = tempDir();
    const relativePath = relative(process.cwd(), elsewhere);
    const name = `np.dir.S${randomUUID().slice(0, 8)}`;
    await provide(`file://${tempDir()}`, name, '1.0.0'); // registered, but in another directory
    const error = await noProvider(`file://${relativePath}`, name, '1.0.0');
    expect(error.message).toContain(`file://${elsewhere} (connected): nothing registered for ${name}`);
  });

  it('a broken registry: its state and why, and that no list came', async () => {
    const port = await freePort();
    const name = `np.broken.S${randomUUID().slice(0, 8)}`;
    const error = await noProvider(`etcd://127.0.0.1:${port}`, name, '1.0.0');
    expect(error.message).toMatch(
      new RegExp(`etcd://127\\.0\\.0\\.1:${port} \\(disconnected: .*ECONNREFUSED.*\\): contents unknown`),
    );
    expect(error.message).toContain('no registry has delivered a list yet');
  });

  it('the four causes read differently', async () => {
    const registry = `file://${tempDir()}`;
    const name = `np.differ.S${randomUUID().slice(0, 8)}`;
    await provide(registry, name, '1.0.0', 'a');
    const messages = [
      (await noProvider(registry, name, '2.0.0', 'a')).message,
      (await noProvider(registry, name, '1.0.0')).message,
      (await noProvider(`file://${tempDir()}`, name, '1.0.0', 'a')).message,
      (await noProvider(`etcd://127.0.0.1:${await freePort()}`, name, '1.0.0', 'a')).message,
    ];
    const phrases = [
      'registered versions: 1.0.0',
      'groups: a',
      `nothing registered for ${name}`,
      'disconnected',
    ];
    for (const [index, phrase] of phrases.entries()) {
      for (const [other, message] of messages.entries())
        expect(message.includes(phrase)).toBe(index === other);
    }
  });

  it('looks up what the registries hold when errors are built, at most once per 5 s, not per call', async () => {
    const dir = tempDir();
    let lookups = 0;
    const consumer = await testApp({
      registry: 'counted://localhost:1',
      consumer: { snapshotDir: '' },
      extend: (extensions) =>
        extensions.register('registry', 'counted', (address, options) => {
          const inner = createFileRegistry({ ...address, kind: 'file', hosts: [dir] }, options);
          const counted: Registry = Object.create(inner);
          counted.inventory = (serviceName: string) => {
            lookups++;
            return inner.inventory!(serviceName);
          };
          return counted;
        }),
    });
    const ref = consumer.refer(service(`np.rate.S${randomUUID().slice(0, 8)}`, '1.0.0'));
    const codes = new Set<string>();
    for (let i = 0; i < 500; i++)
      codes.add(await ref.read('x').catch((error: unknown) => RpcError.from(error).code));
    expect([...codes]).toEqual(['NoProvider']);
    expect(lookups).toBe(1);
  });
});
