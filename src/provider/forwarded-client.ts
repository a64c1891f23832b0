/**
 * The original client of a call that came through a gateway. The HTTP gateway calls providers on
 * connections of its own, so without it every HTTP client behind one gateway would be one address to a
 * provider: one bucket of its per-address limits. The gateway writes the client's `host:port` in the
 * attachment {@link FORWARDED_CLIENT_ATTACHMENT} of every call (replacing whatever its caller sent);
 * a provider takes it as the caller's address only on connections from the gateways it trusts
 * (`server.trustedGateways`), and drops it from anyone else's calls, so it cannot be forged.
 */
import type { Attachments } from '../core/invocation.js';

/** The attachment a gateway forwards its client's `host:port` in. */
export const FORWARDED_CLIENT_ATTACHMENT = 'callisto-forwarded-client';

/** A socket's address as compared with `server.trustedGateways` (an IPv4-mapped IPv6 address unwrapped). */
export const plainAddress = (address: string | undefined): string => (address ?? '').replace(/^::ffff:/, '');

/** The host of a `host:port` (or `[v6]:port`) address. */
export const hostOf = (address: string): string => address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

/**
 * The forwarded client of a call's attachments: its `host:port` when the connection is from a trusted
 * gateway and it names one; otherwise undefined, and the attachment is removed (not honoured, not seen
 * by handlers).
 */
export function forwardedClient(attachments: Attachments, trusted: boolean): string | undefined {
  const value = attachments[FORWARDED_CLIENT_ATTACHMENT];
  if (value === undefined) return undefined;
  if (!trusted || value === '' || value.length > 64) {
    delete (attachments as Record<string, string>)[FORWARDED_CLIENT_ATTACHMENT];
    return undefined;
  }
  return value;
}
