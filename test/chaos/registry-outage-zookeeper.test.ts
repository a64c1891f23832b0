/** Chaos 3 on ZooKeeper: see support/registry-outage.ts. */
import { startZooKeeper } from '../setup/servers.js';
import { runRegistryOutage } from './support/registry-outage.js';

runRegistryOutage('zookeeper', startZooKeeper);
