/**
 * The registries of an app, created on first use from their addresses and shared by the provider and
 * consumer sides. Closed last on shutdown.
 */
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import { createRegistry } from '../registry/create-registry.js';
import type { Registry } from '../registry/registry.js';

export interface RegistrySet {
  /** The registries for these addresses, created (and connected) on first use. */
  get(addresses: readonly string[]): Promise<Registry[]>;
  /** Registries created so far. */
  created(): Promise<Registry[]>;
  close(): Promise<void>;
}

export function createRegistrySet(extensions: ExtensionRegistry, ttlMs: number, logger: Logger): RegistrySet {
  const registries = new Map<string, Promise<Registry>>();
  const log = (level: 'info' | 'warn' | 'error', message: string) => logger[level](message);
  const one = (address: string): Promise<Registry> => {
    let registry = registries.get(address);
    if (registry === undefined) {
      registry = createRegistry(address, { ttlMs, log }, extensions);
      registries.set(address, registry);
    }
    return registry;
  };
  return {
    get: (addresses) => Promise.all(addresses.map(one)),
    async created() {
      const settled = await Promise.allSettled(registries.values());
      return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    },
    async close() {
      const settled = await Promise.allSettled(registries.values());
      registries.clear();
      await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
    },
  };
}
