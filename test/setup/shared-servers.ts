/** Inside test files: the shared servers the global setup started (test/setup/global-setup.ts). */
import { inject } from 'vitest';
import { INSTALL_HINT, type ServerKind } from './servers.js';

const keys = { etcd: 'etcdAddress', zookeeper: 'zookeeperAddress', redis: 'redisAddress' } as const;

/** `host:port` of the shared server of `kind`; throws with an install hint when it is not running. */
export function sharedServerAddress(kind: ServerKind): string {
  const address = inject(keys[kind]);
  if (!address) {
    throw new Error(
      `the shared ${kind} server is not running (${INSTALL_HINT}; or CALLISTO_TEST_SERVERS excludes it)`,
    );
  }
  return address;
}
