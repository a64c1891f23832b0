/**
 * Shared-secret tokens (the seed designs' token): each identity has a secret; a caller presenting a
 * secret is that identity. Compared in constant time: both sides are hashed (SHA-256, so lengths never
 * differ) and compared with `crypto.timingSafeEqual`, against every configured secret (no early exit
 * that would tell which one came close).
 */
import crypto from 'node:crypto';
import type { CallerIdentity } from '../core/invocation.js';
import type { Authenticator } from './authenticator.js';

/** Shortest accepted secret; shorter ones are guessable. */
export const MIN_TOKEN_LENGTH = 16;

const digest = (text: string): Buffer => crypto.createHash('sha256').update(text, 'utf8').digest();

/** `tokens`: identity -> secret. Throws a TypeError for a secret shorter than MIN_TOKEN_LENGTH. */
export function tokenAuthenticator(tokens: Readonly<Record<string, string>>): Authenticator {
  const entries = Object.entries(tokens).map(([id, secret]) => {
    if (typeof secret !== 'string' || secret.length < MIN_TOKEN_LENGTH) {
      throw new TypeError(
        `token of ${JSON.stringify(id)}: at least ${MIN_TOKEN_LENGTH} characters (e.g. openssl rand -hex 32)`,
      );
    }
    return { identity: Object.freeze({ id, via: 'token' }) as CallerIdentity, hash: digest(secret) };
  });
  return {
    name: 'token',
    authenticate({ credentials }) {
      if (credentials === undefined) return undefined;
      const presented = digest(credentials);
      let found: CallerIdentity | undefined;
      for (const entry of entries) {
        if (crypto.timingSafeEqual(presented, entry.hash) && found === undefined) found = entry.identity;
      }
      return found;
    },
  };
}
