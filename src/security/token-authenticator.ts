/**
 * Shared-secret tokens (the seed designs' token): each identity has a secret; a caller presenting a
 * secret is that identity. Compared with `crypto.timingSafeEqual` against every configured secret (no
 * early exit that would tell which one came close; for a secret of another length a stand-in
 * comparison of the same cost runs), so the time does not depend on the secrets' bytes, only on their
 * lengths (not secret: at least MIN_TOKEN_LENGTH random characters). The presented token is written
 * into a scratch buffer of its length, not allocated.
 */
import crypto from 'node:crypto';
import type { CallerIdentity } from '../core/invocation.js';
import type { Authenticator } from './authenticator.js';

/** Shortest accepted secret; shorter ones are guessable. */
export const MIN_TOKEN_LENGTH = 16;

/** Longest secret, and longest token compared (a longer one is refused without work). */
export const MAX_TOKEN_LENGTH = 4096;

/** `tokens`: identity -> secret. Throws a TypeError for a secret shorter than MIN_TOKEN_LENGTH. */
export function tokenAuthenticator(tokens: Readonly<Record<string, string>>): Authenticator {
  const entries = Object.entries(tokens).map(([id, secret]) => {
    if (typeof secret !== 'string' || secret.length < MIN_TOKEN_LENGTH || secret.length > MAX_TOKEN_LENGTH) {
      throw new TypeError(
        `token of ${JSON.stringify(id)}: ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
      );
    }
    const identity: CallerIdentity = Object.freeze({ id, via: 'token' });
    return { identity, secret: Buffer.from(secret, 'utf8') };
  });
  /** One scratch buffer per secret length. */
  const scratch = new Map<number, Buffer>();
  for (const { secret } of entries) {
    if (!scratch.has(secret.length)) scratch.set(secret.length, Buffer.alloc(secret.length));
  }
  return {
    name: 'token',
    authenticate({ credentials }) {
      if (credentials === undefined || credentials.length > MAX_TOKEN_LENGTH) return undefined;
      const length = Buffer.byteLength(credentials, 'utf8');
      const presented = scratch.get(length);
      if (presented !== undefined) presented.write(credentials, 0, 'utf8');
      let found: CallerIdentity | undefined;
      for (const entry of entries) {
        const same =
          presented !== undefined && length === entry.secret.length
            ? crypto.timingSafeEqual(presented, entry.secret)
            : crypto.timingSafeEqual(entry.secret, entry.secret) && false;
        if (same && found === undefined) found = entry.identity;
      }
      presented?.fill(0);
      return found;
    },
  };
}
