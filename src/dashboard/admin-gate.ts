/**
 * Which admin endpoints the dashboard asks. A provider record names its app's admin address, and
 * anyone who can write to a registry can write a record: followed blindly, a record would make the
 * dashboard send its admin token, and requests, to any host and port. The dashboard asks an admin
 * address only when its host is the host of the record that names it (the provider's own machine),
 * or when the address is in `adminAllow` (`host` or `host:port`); otherwise it says why on the page.
 */
import type { ProviderRecord } from '../registry/index.js';
import { type AdminAddress, adminAddressOf } from './sources.js';

export type AdminVerdict =
  | { readonly kind: 'none' }
  | { readonly kind: 'ok'; readonly address: AdminAddress }
  | { readonly kind: 'refused'; readonly reason: string };

export interface AdminGate {
  of(record: ProviderRecord): AdminVerdict;
}

const NONE: AdminVerdict = { kind: 'none' };

/** `[::1]` and `::1` compare equal; names compare without case. */
const bare = (host: string) => host.replace(/^\[(.*)\]$/, '$1').toLowerCase();

export function createAdminGate(adminAllow: readonly string[]): AdminGate {
  const hosts = new Set<string>();
  const addresses = new Set<string>();
  for (const entry of adminAllow) {
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!match) continue;
    if (match[2] === undefined) hosts.add(bare(match[1]!));
    else addresses.add(`${bare(match[1]!)}|${Number(match[2])}`);
  }
  return {
    of(record) {
      const address = adminAddressOf(record);
      if (address === undefined) return NONE;
      const host = bare(address.host);
      if (host === bare(record.host) || hosts.has(host) || addresses.has(`${host}|${address.port}`)) {
        return { kind: 'ok', address };
      }
      return {
        kind: 'refused',
        reason: `not asked: the record names admin endpoints on ${address.host}:${address.port}, not on its own host ${record.host} (allow them with --admin-allow ${address.host}:${address.port})`,
      };
    },
  };
}
