/** Chaos 3 on Redis: see support/registry-outage.ts. */
import { startRedis } from '../setup/servers.js';
import { runRegistryOutage } from './support/registry-outage.js';

runRegistryOutage('redis', startRedis);
