import { startEtcd } from '../setup/servers.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runRegistryConformance } from './conformance.js';
import { etcdRawStore } from './fixtures/raw-store.js';

runRegistryConformance({
  kind: 'etcd',
  ttlMs: 2_000,
  address: () => `etcd://${sharedServerAddress('etcd')}`,
  rawStore: async () => etcdRawStore(sharedServerAddress('etcd')),
  privateServer: startEtcd,
});
