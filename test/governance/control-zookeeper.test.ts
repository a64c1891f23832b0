import { zookeeperRawStore } from '../registry/fixtures/raw-store.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runControlSuite } from './control-suite.js';

runControlSuite({
  kind: 'zookeeper',
  address: () => `zookeeper://${sharedServerAddress('zookeeper')}`,
  rawStore: () => zookeeperRawStore(sharedServerAddress('zookeeper')),
});
