/**
 * The registry conformance suite on `redis-sentinel://` (a primary, a replica and 3 Sentinels on
 * loopback, started for this file): the registry asks the sentinels for the primary and behaves like
 * `redis://` in every case. Losing the primary under load: test/multihost/registry-cluster-redis.test.ts.
 */
import { afterAll, beforeAll } from 'vitest';
import { type RegistryCluster, startRedisSentinel } from '../setup/clusters.js';
import { runRegistryConformance } from './conformance.js';
import { redisRawStore } from './fixtures/raw-store.js';

let cluster: RegistryCluster;

beforeAll(async () => {
  cluster = await startRedisSentinel();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
});

runRegistryConformance({
  kind: 'redis-sentinel',
  ttlMs: 2_000,
  address: () => cluster.url,
  rawStore: () => redisRawStore(cluster.servers[0]!.address),
});
