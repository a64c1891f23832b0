/**
 * The registry watch's bound: a registry holding more service keys than it follows shows the first
 * ones and says so, instead of subscribing to every one. (The watch against real registries is
 * exercised by the page, CLI and engine tests.)
 */
import { describe, expect, it } from 'vitest';
import { createRegistryWatch, MAX_KEYS_PER_REGISTRY } from '../../src/dashboard/registry-watch.js';
import type { Registry, ServiceListing } from '../../src/registry/index.js';

/** A registry that lists `count` keys and counts the subscriptions it is asked for. */
function listingRegistry(count: number) {
  const listings: ServiceListing[] = Array.from({ length: count }, (_, i) => ({
    name: `svc.S${String(i).padStart(5, '0')}`,
    version: '1.0.0',
    group: '',
    providers: 1,
    consumers: 0,
  }));
  let subscriptions = 0;
  const registry: Registry = {
    kind: 'listing',
    status: 'connected',
    register: async () => {},
    unregister: async () => {},
    registerConsumer: async () => {},
    unregisterConsumer: async () => {},
    async subscribe(_key, listener) {
      subscriptions++;
      listener([]);
      return () => {
        subscriptions--;
      };
    },
    onStatus: () => () => {},
    close: async () => {},
    services: async () => listings,
  };
  return { registry, subscriptions: () => subscriptions };
}

describe('the registry watch', () => {
  it(`follows at most ${MAX_KEYS_PER_REGISTRY} keys of a registry, and says the list is cut`, async () => {
    const big = listingRegistry(MAX_KEYS_PER_REGISTRY + 500);
    const watch = createRegistryWatch([{ address: 'listing://big', registry: big.registry }], 60_000);
    try {
      await watch.ready;
      expect(watch.keys()).toHaveLength(MAX_KEYS_PER_REGISTRY);
      expect(big.subscriptions()).toBe(MAX_KEYS_PER_REGISTRY);
      expect(watch.registries()[0]).toMatchObject({ status: 'connected', truncated: true });
    } finally {
      await watch.close();
    }
    expect(big.subscriptions()).toBe(0);
  });

  it('follows every key of a registry within the bound', async () => {
    const small = listingRegistry(3);
    const watch = createRegistryWatch([{ address: 'listing://small', registry: small.registry }], 60_000);
    try {
      await watch.ready;
      expect(watch.keys().map((k) => k.key.name)).toEqual(['svc.S00000', 'svc.S00001', 'svc.S00002']);
      expect(watch.registries()[0]!.truncated).toBeUndefined();
    } finally {
      await watch.close();
    }
  });

  it("says why a registry could not list a key's consumers, instead of showing none", async () => {
    const failing = listingRegistry(1);
    const registry: Registry = {
      ...failing.registry,
      consumers: async () => {
        throw new Error('connection lost');
      },
    };
    const watch = createRegistryWatch([{ address: 'listing://failing', registry }], 60_000);
    try {
      await watch.ready;
      expect(await watch.consumers({ name: 'svc.S00000', version: '1.0.0', group: '' })).toEqual({
        records: [],
        errors: ['cannot read the consumers from listing://failing: connection lost'],
      });
    } finally {
      await watch.close();
    }
  });
});
