import { sharedServerAddress } from '../setup/shared-servers.js';
import { runRoutingSuite } from './routing-suite.js';

runRoutingSuite({ kind: 'etcd', address: () => `etcd://${sharedServerAddress('etcd')}` });
