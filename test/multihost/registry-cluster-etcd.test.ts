/** A 3-member etcd cluster loses its raft leader under load: see support/leader-failover.ts. */
import { startEtcdCluster } from '../setup/clusters.js';
import { runLeaderFailover } from './support/leader-failover.js';

runLeaderFailover('etcd (3 members)', startEtcdCluster);
