/** A 3-server ZooKeeper ensemble loses its leader under load: see support/leader-failover.ts. */
import { startZooKeeperEnsemble } from '../setup/clusters.js';
import { runLeaderFailover } from './support/leader-failover.js';

runLeaderFailover('ZooKeeper (3 servers)', startZooKeeperEnsemble);
