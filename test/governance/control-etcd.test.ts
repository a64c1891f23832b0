import { etcdRawStore } from '../registry/fixtures/raw-store.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runControlSuite } from './control-suite.js';

runControlSuite({
  kind: 'etcd',
  address: () => `etcd://${sharedServerAddress('etcd')}`,
  rawStore: async () => etcdRawStore(sharedServerAddress('etcd')),
});
