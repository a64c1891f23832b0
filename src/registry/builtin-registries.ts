/**
 * The built-in registry kinds (kind `registry`, in app/builtin-extensions.ts's constant table): `file`,
 * `direct`, `etcd`, `zookeeper` (alias `zk`), `redis` and
 * `redis-sentinel`. The heavy clients are imported only when their
 * kind is used.
 */
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
