/** Redis loses its primary under load; Sentinel promotes the replica: see support/leader-failover.ts. */
import { startRedisSentinel } from '../setup/clusters.js';
import { runLeaderFailover } from './support/leader-failover.js';

runLeaderFailover('Redis (primary + replica + 3 sentinels)', startRedisSentinel);
