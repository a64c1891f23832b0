import { startEtcd } from '../setup/servers.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runRegistryConformance } from './conformance.js';

runRegistryConformance({
  kind: 'etcd',
  ttlMs: 2_000,
  address: () => `etcd://${sharedServerAddress('etcd')}`,
  privateServer: startEtcd,
});
