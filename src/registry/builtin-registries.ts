/**
 * The built-in registry kinds (kind `registry`, in app/builtin-extensions.ts's constant table): `file`,
 * `direct`, `etcd`, `zookeeper` (alias `zk`), `redis` and `redis-sentinel`.
 *
 * Each driver's modules (and the heavy client packages they load) are imported when a registry of its
 * kind is made, not when Callisto is: an app with one registry kind loads that driver alone, and one
 * with none loads none (docs/performance.md, "Memory").
 */
import { createDirectRegistry } from './direct-registry.js';
import type { RegistryFactory } from './registry.js';

const etcd: RegistryFactory = async (address, options) =>
  (await import('./etcd-registry.js')).createEtcdRegistry(address, options);
const zookeeper: RegistryFactory = async (address, options) =>
  (await import('./zookeeper-registry.js')).createZooKeeperRegistry(address, options);
const redis: RegistryFactory = async (address, options) =>
  (await import('./redis-registry.js')).createRedisRegistry(address, options);

/** The built-in factories by address kind. */
export const BUILTIN_REGISTRY_FACTORIES: Readonly<Record<string, RegistryFactory>> = {
  file: async (address, options) => (await import('./file-registry.js')).createFileRegistry(address, options),
  direct: createDirectRegistry, // a list of addresses: no driver to load
  etcd,
  zookeeper,
  zk: zookeeper,
  redis,
  'redis-sentinel': redis,
};
