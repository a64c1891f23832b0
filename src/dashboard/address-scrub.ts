/**
 * The registry addresses the dashboard was given may hold passwords (`redis://:pw@host:6379`): every
 * text the dashboard shows or logs goes through `scrub`, which writes each such address, wherever it
 * appears (a list, an error message, a provider's configuration), in its redacted form.
 */
import { HIDDEN, redactAddress } from '../internal.js';

export type Scrub = (text: string) => string;

export function createAddressScrub(addresses: readonly string[]): Scrub {
  const pairs: Array<[string, string]> = [];
  for (const address of addresses) {
    const shown = redactAddress(address);
    if (shown === address) continue;
    pairs.push([address, shown]);
    // as it appears inside JSON text
    const quoted = JSON.stringify(address).slice(1, -1);
    if (quoted !== address) pairs.push([quoted, JSON.stringify(shown).slice(1, -1)]);
    // the secrets on their own too (an error may quote them), when long enough to be told apart
    for (const secret of secretsOf(address)) {
      pairs.push([secret, HIDDEN]);
      try {
        const decoded = decodeURIComponent(secret);
        if (decoded !== secret && decoded.length >= 4) pairs.push([decoded, HIDDEN]);
      } catch {
        // not percent-encoded text
      }
    }
  }
  // longest first: an address that contains another is replaced whole
  pairs.sort(([a], [b]) => b.length - a.length);
  if (pairs.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const [raw, shown] of pairs) out = out.split(raw).join(shown);
    return out;
  };
}

/** The password of an address's user part and the values of its secret-named query parameters. */
function secretsOf(address: string): string[] {
  const found: string[] = [];
  const user = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(address)?.[1];
  if (user !== undefined) found.push(user.includes(':') ? user.slice(user.indexOf(':') + 1) : user);
  for (const match of address.matchAll(/[?&]([^=&#]+)=([^&#]*)/g)) {
    if (/pass(?:word)?|secret|token|credential/i.test(match[1]!)) found.push(match[2]!);
  }
  return found.filter((secret) => secret.length >= 4);
}
