/** The built-in fault-tolerance strategies (kind `cluster`, in app/builtin-extensions.ts's constant table). */
import { broadcast } from './broadcast.js';
import type { ClusterFactory } from './cluster.js';
import { failback } from './failback.js';
import { failfast } from './failfast.js';
import { failover } from './failover.js';
import { failsafe } from './failsafe.js';
import { forking } from './forking.js';
import { hedging } from './hedging.js';

export const BUILTIN_CLUSTERS: Readonly<Record<string, ClusterFactory>> = {
  failover,
  failfast,
  failsafe,
  failback,
  forking,
  broadcast,
  hedging,
};
