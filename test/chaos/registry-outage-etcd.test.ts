/** Chaos 3 on etcd: see support/registry-outage.ts. */
import { startEtcd } from '../setup/servers.js';
import { runRegistryOutage } from './support/registry-outage.js';

runRegistryOutage('etcd', startEtcd);
