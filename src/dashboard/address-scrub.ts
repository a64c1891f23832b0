/**
 * The registry addresses the dashboard was given may hold passwords (`redis://:pw@host:6379`): every
 * text the dashboard shows or logs goes through `scrub`, which writes each such address, wherever it
 * appears (a list, an error message, a provider's configuration), in its redacted form.
 */
import { HIDDEN, redactAddress } from '../security/redact.js';

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
    // the password on its own too (an error may quote it), when it is long enough to be told apart
    const password = /^[a-z][a-z0-9+.-]*:\/\/[^/@:?#]*:([^/?#]*)@/i.exec(address)?.[1];
    if (password !== undefined && password.length >= 4) {
      pairs.push([password, HIDDEN]);
      try {
        const decoded = decodeURIComponent(password);
        if (decoded !== password && decoded.length >= 4) pairs.push([decoded, HIDDEN]);
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
