import { startZooKeeper } from '../setup/servers.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runRegistryConformance } from './conformance.js';
import { zookeeperRawStore } from './fixtures/raw-store.js';

runRegistryConformance({
  kind: 'zookeeper',
  ttlMs: 2_000,
  address: () => `zookeeper://${sharedServerAddress('zookeeper')}`,
  rawStore: () => zookeeperRawStore(sharedServerAddress('zookeeper')),
  privateServer: startZooKeeper,
  restartMayDropEntries: true,
});
