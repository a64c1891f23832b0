/** Registers the built-in fault-tolerance strategies as `cluster` extensions. */
import { builtinExtensions, type ExtensionRegistry } from '../extension/extension-registry.js';
import { broadcast } from './broadcast.js';
import type { ClusterFactory } from './cluster.js';
import { failback } from './failback.js';
import { failfast } from './failfast.js';
import { failover } from './failover.js';
import { failsafe } from './failsafe.js';
import { forking } from './forking.js';

export const BUILTIN_CLUSTERS: Readonly<Record<string, ClusterFactory>> = {
  failover,
  failfast,
  failsafe,
  failback,
  forking,
  broadcast,
};

export function registerBuiltinClusters(registry: ExtensionRegistry = builtinExtensions): void {
  for (const [name, factory] of Object.entries(BUILTIN_CLUSTERS)) registry.register('cluster', name, factory);
}

registerBuiltinClusters();
