/** One line about a registry for log lines and NoProvider messages: where it is and how it is doing. */
import type { Registry } from './registry.js';

/**
 * `file:///abs/dir (connected)`, `etcd://h:2379 (connecting)` (no answer and no failure yet),
 * `etcd://h:2379 (disconnected: connect ECONNREFUSED ...)`.
 */
export function describeRegistry(registry: Registry): string {
  const where = registry.location ?? registry.kind;
  if (registry.status === 'connected') return `${where} (connected)`;
  return registry.lastError === undefined
    ? `${where} (connecting)`
    : `${where} (disconnected: ${registry.lastError})`;
}

/** Whether a registry is known to be failing (not merely still connecting). */
export function isFailing(registry: Registry): boolean {
  return registry.status !== 'connected' && registry.lastError !== undefined;
}
