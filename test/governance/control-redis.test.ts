import { redisRawStore } from '../registry/fixtures/raw-store.js';
import { sharedServerAddress } from '../setup/shared-servers.js';
import { runControlSuite } from './control-suite.js';

runControlSuite({
  kind: 'redis',
  address: () => `redis://${sharedServerAddress('redis')}`,
  rawStore: () => redisRawStore(sharedServerAddress('redis')),
});
