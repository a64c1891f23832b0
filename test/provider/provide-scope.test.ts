/**
 * `provide(def, impl, { scope, registries })` over real sockets and two file registries: a `local`
 * service is served in-process only and never registered, a `remote` one is not served in-process, a
 * `none` one nowhere; `registries` registers a service in some of the app's registries only. Mistakes
 * are ConfigErrors naming the key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callContext, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { codeOf } from '../support/outcome-code.js';

interface Where {
  where(): Promise<string>;
}

const defs = {
  local: defineService<Where>('scope.Local', { methods: { where: {} } }),
  remote: defineService<Where>('scope.Remote', { methods: { where: {} } }),
  none: defineService<Where>('scope.None', { methods: { where: {} } }),
  first: defineService<Where>('scope.FirstOnly', { methods: { where: {} } }),
  both: defineService<Where>('scope.Both', { methods: { where: {} } }),
};

/** Answers the caller's address as the provider sees it (`injvm` in-process). */
const impl: Where = { where: async () => callContext()!.remoteAddress ?? '' };

const cleanups: (() => void)[] = [];
afterEach(async () => {
  await closeAll();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function registryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callisto-scope-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return `file://${dir}`;
}

describe('provide() scope and registries', () => {
  it('serves local in-process only, remote over the wire only, none nowhere; registers each where asked', async () => {
    const first = registryDir();
    const second = registryDir();
    const provider = await testApp({
      application: 'scope-provider',
      registry: [first, second],
      server: { port: 0 },
    });
    provider
      .provide(defs.local, impl, { scope: 'local' })
      .provide(defs.remote, impl, { scope: 'remote' })
      .provide(defs.none, impl, { scope: 'none' })
      .provide(defs.first, impl, { registries: [first] })
      .provide(defs.both, impl);
    await provider.start();
    const direct = { url: provider.address!, timeoutMs: 2000, retries: 0 };

    // in the providing app itself
    expect(await provider.refer(defs.local).where()).toBe('injvm');
    const remoteFromInside = await provider.refer(defs.remote, direct).where();
    expect(remoteFromInside).not.toBe('injvm');
    expect(await codeOf(provider.refer(defs.none, direct).where())).toBe('ServiceNotFound');

    // from another app, over the wire
    const consumer = await testApp({ application: 'scope-consumer' });
    expect(await codeOf(consumer.refer(defs.local, direct).where())).toBe('ServiceNotFound');
    expect(await codeOf(consumer.refer(defs.none, direct).where())).toBe('ServiceNotFound');
    expect(await consumer.refer(defs.remote, direct).where()).not.toBe('injvm');

    // registrations: local and none nowhere, FirstOnly in the first registry only, the rest in both
    const fromRegistry = (registry: string) => ({ registry, timeoutMs: 2000, retries: 0 });
    for (const registry of [first, second]) {
      expect(await codeOf(consumer.refer(defs.local, fromRegistry(registry)).where())).toBe('NoProvider');
      expect(await codeOf(consumer.refer(defs.none, fromRegistry(registry)).where())).toBe('NoProvider');
      expect(await codeOf(consumer.refer(defs.both, fromRegistry(registry)).where())).toBe('answered');
      expect(await codeOf(consumer.refer(defs.remote, fromRegistry(registry)).where())).toBe('answered');
    }
    expect(await codeOf(consumer.refer(defs.first, fromRegistry(first)).where())).toBe('answered');
    expect(await codeOf(consumer.refer(defs.first, fromRegistry(second)).where())).toBe('NoProvider');
  });

  it('refuses a bad scope, and registries the app does not have, naming the key', async () => {
    const registry = registryDir();
    const app = await testApp({ registry: [registry] });
    expect(() => app.provide(defs.local, impl, { scope: 'everywhere' as never })).toThrow(/scope/);
    expect(() => app.provide(defs.first, impl, { registries: ['file:///elsewhere'] })).toThrow(
      /registries\[0\][\s\S]*file:\/\/\/elsewhere/,
    );
  });
});
