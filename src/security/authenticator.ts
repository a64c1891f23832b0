/**
 * The authenticator extension point: how a provider learns who is calling. The `auth` filter
 * (filters/auth.ts) asks its authenticators in turn; the first that returns an identity wins. An
 * authenticator returns `undefined` for credentials that are not its kind (a JWT authenticator given a
 * plain token), and throws an {@link AuthFailure} for credentials of its kind that do not hold (an
 * expired token): its reason reaches the caller, never the credentials.
 *
 * Built in: shared-secret tokens (token-authenticator.ts), signed tokens (jwt-authenticator.ts) and the
 * client certificate of a mutual-TLS connection (mtls-authenticator.ts).
 */
import type { CallerIdentity } from '../core/invocation.js';
import type { PeerCertificate } from './peer-certificate.js';

export type { CallerIdentity };

/** What an authenticator sees of a call. */
export interface AuthRequest {
  /** The service's name (a JWT's audience). */
  readonly service: string;
  readonly method: string;
  /** The credentials the caller sent (the `authorization` attachment, `Bearer ` removed), if any. */
  readonly credentials: string | undefined;
  /** The caller's `host:port`. */
  readonly remoteAddress: string;
  /** The caller's client certificate, on a mutual-TLS connection. */
  readonly peer: PeerCertificate | undefined;
}

export interface Authenticator {
  /** Names it in messages (`token`, `jwt`, `mtls`). */
  readonly name: string;
  /** True when `authenticate` may return a promise (the filter then runs as a wrapping filter). */
  readonly async?: boolean;
  /** The caller's identity; undefined when the request carries nothing for it; throws AuthFailure. */
  authenticate(request: AuthRequest): CallerIdentity | undefined | Promise<CallerIdentity | undefined>;
}

/** Credentials of an authenticator's kind that do not hold; `message` is safe to show the caller. */
export class AuthFailure extends Error {
  override readonly name = 'AuthFailure';
}

/** The attachment credentials travel in, as `Bearer <token>`. */
export const AUTH_ATTACHMENT = 'authorization';

/** `token` as the value of the {@link AUTH_ATTACHMENT} attachment. */
export function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** The token of an attachment value (`Bearer ` removed), or undefined. */
export function credentialsOf(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  return value.startsWith('Bearer ') ? value.slice(7).trim() : value.trim();
}
