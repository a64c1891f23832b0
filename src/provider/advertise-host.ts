/**
 * The host a provider announces to consumers (the `host` of its registry records):
 *
 * - `server.advertiseHost` when set (bind one address, announce another: NAT, a load balancer, a name);
 * - else `server.host`, when it is one address;
 * - else, for a wildcard `server.host` ('0.0.0.0', '::'), the first non-internal interface address the
 *   operating system lists (`os.networkInterfaces()` order): IPv4 first, then a global IPv6 address (a
 *   link-local `fe80::` one needs a zone and is never chosen). Only a machine without any such address
 *   announces loopback (`127.0.0.1`, or `::1` for '::'), and says so, since only it can call that.
 *
 * A wildcard is never announced: no consumer can connect to 0.0.0.0.
 */
import os from 'node:os';

/** `os.networkInterfaces()`: interface name -> its addresses. */
export type InterfaceTable = Readonly<Record<string, readonly os.NetworkInterfaceInfo[] | undefined>>;

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]', '0:0:0:0:0:0:0:0']);

/** Whether `host` listens on every interface. */
export function isWildcardHost(host: string): boolean {
  return WILDCARDS.has(host.trim());
}

/** What to announce, and why when it is a fallback nobody else can reach. */
export interface AdvertisedHost {
  readonly host: string;
  /** Set when no non-internal address was found and loopback is announced. */
  readonly warning?: string;
}

function isLinkLocalV6(address: string): boolean {
  return /^fe[89ab]/i.test(address);
}

/** The first non-internal address of `family` in interface order, or undefined. */
export function firstExternalAddress(
  interfaces: InterfaceTable,
  family: 'IPv4' | 'IPv6',
): string | undefined {
  for (const addresses of Object.values(interfaces)) {
    for (const info of addresses ?? []) {
      if (info.internal || info.family !== family) continue;
      if (family === 'IPv6' && isLinkLocalV6(info.address)) continue;
      return info.address;
    }
  }
  return undefined;
}

/** The host to write into the registry for a server bound to `host` (see the module comment). */
export function advertisedHostOf(
  server: { readonly host: string; readonly advertiseHost?: string | undefined },
  interfaces: InterfaceTable = os.networkInterfaces(),
): AdvertisedHost {
  if (server.advertiseHost) return { host: server.advertiseHost };
  if (!isWildcardHost(server.host)) return { host: server.host };
  const external = firstExternalAddress(interfaces, 'IPv4') ?? firstExternalAddress(interfaces, 'IPv6');
  if (external !== undefined) return { host: external };
  const loopback = server.host.includes(':') ? '::1' : '127.0.0.1';
  return {
    host: loopback,
    warning:
      `server.host is ${server.host} but this machine has no non-internal network address: announcing ` +
      `${loopback}, which only this machine can call; set server.advertiseHost to the address consumers use`,
  };
}
