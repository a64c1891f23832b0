import { startRedis } from '../setup/servers.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runRegistryConformance } from './conformance.js';
import { redisRawStore } from './fixtures/raw-store.js';

runRegistryConformance({
  kind: 'redis',
  ttlMs: 2_000,
  address: () => `redis://${sharedServerAddress('redis')}`,
  rawStore: () => redisRawStore(sharedServerAddress('redis')),
  privateServer: startRedis,
  restartMayDropEntries: true,
});
