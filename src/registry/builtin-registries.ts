/**
 * Registers the built-in registry kinds as extensions of kind `registry`: `file`, `direct`, `etcd`,
 * `zookeeper` (alias `zk`), `redis` and `redis-sentinel`. The heavy clients are imported only when their kind is used.
 */
import { builtinExtensions, type ExtensionRegistry } from '../extension/extension-registry.js';
import { createDirectRegistry } from './direct-registry.js';
import { createEtcdRegistry } from './etcd-registry.js';
import { createFileRegistry } from './file-registry.js';
import { createRedisRegistry } from './redis-registry.js';
import type { RegistryFactory } from './registry.js';
import { createZooKeeperRegistry } from './zookeeper-registry.js';

/** The built-in factories by address kind. */
export const BUILTIN_REGISTRY_FACTORIES: Readonly<Record<string, RegistryFactory>> = {
  file: createFileRegistry,
  direct: createDirectRegistry,
  etcd: createEtcdRegistry,
  zookeeper: createZooKeeperRegistry,
  zk: createZooKeeperRegistry,
  redis: createRedisRegistry,
  'redis-sentinel': createRedisRegistry,
};

/** Registers the built-ins on `extensions` (the process-wide registry by default). */
export function registerBuiltinRegistries(extensions: ExtensionRegistry = builtinExtensions): void {
  for (const [name, factory] of Object.entries(BUILTIN_REGISTRY_FACTORIES)) {
    if (!extensions.has('registry', name)) extensions.register('registry', name, factory);
  }
}

registerBuiltinRegistries();
