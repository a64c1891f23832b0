/**
 * One log line per provider per outage. The first failure of a connection to an address is logged as
 * it happens; further failures while it stays down (reconnect attempts, calls that find no connection)
 * are only counted, and the count is told when the address is connected again or leaves the provider
 * list. Without it a consumer whose provider went away logged thousands of lines a second.
 */
import type { RpcError } from '../core/rpc-error.js';

export interface OutageLog {
  /** A connection to `address` was lost or could not be opened. */
  lost(address: string, error: RpcError): void;
  /** A connection to `address` is open. */
  connected(address: string): void;
  /** `address` is no longer wanted by any provider list. */
  forgotten(address: string): void;
}

interface Outage {
  readonly since: number;
  failures: number;
}

export function createOutageLog(
  log: (level: 'info' | 'warn', message: string) => void,
  now: () => number = Date.now,
): OutageLog {
  const outages = new Map<string, Outage>();
  const suppressed = (outage: Outage): string => {
    const more = outage.failures - 1;
    return more === 0 ? '' : `; ${more} more failure${more === 1 ? '' : 's'} meanwhile, not logged`;
  };
  return {
    lost(address, error) {
      const outage = outages.get(address);
      if (outage !== undefined) {
        outage.failures++;
        return;
      }
      outages.set(address, { since: now(), failures: 1 });
      log('warn', `lost connection to ${address}: ${error.message}`);
    },
    connected(address) {
      const outage = outages.get(address);
      if (outage === undefined) return;
      outages.delete(address);
      log('info', `connected to ${address} again after ${now() - outage.since} ms${suppressed(outage)}`);
    },
    forgotten(address) {
      const outage = outages.get(address);
      if (outage === undefined) return;
      outages.delete(address);
      log(
        'info',
        `${address} left the provider list, unreachable for ${now() - outage.since} ms${suppressed(outage)}`,
      );
    },
  };
}
