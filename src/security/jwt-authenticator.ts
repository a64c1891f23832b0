/**
 * Signed tokens (JWT, verified with `jose`): HMAC (`HS256/384/512`, a shared secret) or asymmetric
 * (`RS*`, `PS*`, `ES*`, `EdDSA`, a public key). A token holds when its signature verifies, it has not
 * expired (`exp`, required), it is valid already (`nbf`), its audience (`aud`) names the service called,
 * and (when configured) its issuer is the expected one; the caller is its subject (`sub`, required).
 *
 * Verified tokens are kept (per service, at most `cacheSize`) until they expire, so that a caller
 * reusing its token costs a map lookup, not a signature check; the expiry and start are checked on
 * every call all the same, so a replayed token fails once it expired.
 *
 * Signature checks in progress are bounded in all (`maxPending`) and per remote address
 * (`maxPendingPerAddress`), so one address flooding forged tokens is refused `Overloaded` while the
 * others' fresh tokens are still checked. With `maxLifetimeMs`, a token whose lifetime (`exp - iat`, or
 * `exp - now` without `iat`) is longer is refused: a leaked token cannot be good for years.
 */
import crypto from 'node:crypto';
import { errors, type JWTPayload, jwtVerify } from 'jose';
import type { CallerIdentity } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { type Authenticator, AuthFailure } from './authenticator.js';

const HMAC = ['HS256', 'HS384', 'HS512'];
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** Shortest accepted HMAC secret, bytes (RFC 7518: at least the hash's size; 32 for HS256). */
export const MIN_JWT_SECRET_BYTES = 32;

export interface JwtAuthenticatorOptions {
  /** The HMAC secret (HS*). Give this or `publicKey`. */
  secret?: string | Uint8Array;
  /** The verification key, PEM text (RS*, PS*, ES*, EdDSA). */
  publicKey?: string;
  /** Accepted algorithms; default every one of the key's kind. */
  algorithms?: string[];
  /** The issuer tokens must name (`iss`); default: any. */
  issuer?: string;
  /** The audience tokens must name; default: the service called. */
  audience?: (service: string) => string;
  /** Clock skew allowed on `exp` and `nbf`, seconds. Default 0. */
  clockToleranceS?: number;
  /** Verified tokens kept. Default 1024. */
  cacheSize?: number;
  /**
   * Signature checks in progress at once (they run off the event loop); a call beyond it is refused
   * with `Overloaded` before any work, so a flood of forged tokens costs a bounded amount. Default 256.
   */
  maxPending?: number;
  /**
   * Signature checks in progress at once for the calls of one remote address (its host, without the
   * port). Default an eighth of `maxPending` (32), at least 1.
   */
  maxPendingPerAddress?: number;
  /** Longest lifetime a token may have (`exp - iat`, or `exp - now` without `iat`), ms; 0: any. Default 0. */
  maxLifetimeMs?: number;
  /** The clock (tests). Default Date.now. */
  now?: () => number;
}

interface Verified {
  readonly identity: CallerIdentity;
  /** ms since epoch, tolerance included */
  readonly notAfter: number;
  readonly notBefore: number;
}

/** The reason a token did not hold, without the token. */
function reasonOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'token not valid yet (nbf is in the future)';
    if (error.claim === 'aud') return 'token is for another audience (service)';
    if (error.claim === 'iss') return 'token from an unexpected issuer';
    if (error.claim === 'sub' || error.claim === 'exp') return `token has no ${error.claim} claim`;
    return `token claim ${error.claim} invalid`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature does not verify';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token signed with an algorithm not accepted';
  if (error instanceof errors.JOSEError) return 'malformed token';
  return 'token could not be verified';
}

/** Whether `text` has the shape of a compact JWS (three base64url parts). */
const looksLikeJwt = (text: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]*$/.test(text);

/** The host of a `host:port` remote address (what the framed and HTTP servers give), `[v6]` unwrapped. */
const hostOf = (remoteAddress: string): string =>
  remoteAddress.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

export function jwtAuthenticator(options: JwtAuthenticatorOptions): Authenticator {
  const { secret, publicKey } = options;
  if ((secret === undefined) === (publicKey === undefined)) {
    throw new TypeError('jwtAuthenticator: give either secret (HMAC) or publicKey (asymmetric)');
  }
  let key: Uint8Array | crypto.KeyObject;
  let algorithms: string[];
  if (secret !== undefined) {
    key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
    if (key.byteLength < MIN_JWT_SECRET_BYTES) {
      throw new TypeError(`jwtAuthenticator: secret of at least ${MIN_JWT_SECRET_BYTES} bytes`);
    }
    algorithms = options.algorithms ?? HMAC;
  } else {
    key = crypto.createPublicKey(publicKey!);
    algorithms = options.algorithms ?? ASYMMETRIC;
  }
  const audienceOf = options.audience ?? ((service: string) => service);
  const toleranceMs = (options.clockToleranceS ?? 0) * 1000;
  const cacheSize = options.cacheSize ?? 1024;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Verified>();
  const maxPending = options.maxPending ?? 256;
  const maxPendingPerAddress = options.maxPendingPerAddress ?? Math.max(1, Math.floor(maxPending / 8));
  const maxLifetimeMs = options.maxLifetimeMs ?? 0;
  let pending = 0;
  const pendingByAddress = new Map<string, number>();

  const verify = async (token: string, service: string, cacheKey: string): Promise<CallerIdentity> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms,
        audience: audienceOf(service),
        ...(options.issuer ? { issuer: options.issuer } : {}),
        clockTolerance: options.clockToleranceS ?? 0,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(now()),
      }));
    } catch (error) {
      throw new AuthFailure(reasonOf(error));
    }
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new AuthFailure('token has no sub claim');
    if (maxLifetimeMs > 0) {
      const since = typeof payload.iat === 'number' ? 'iat' : 'now';
      const from = since === 'iat' ? payload.iat! * 1000 : now();
      if (payload.exp! * 1000 - from > maxLifetimeMs) {
        throw new AuthFailure(
          `token lives longer than ${maxLifetimeMs} ms (exp - ${since}; server.auth.jwtMaxLifetime)`,
        );
      }
    }
    const notAfter = payload.exp! * 1000 + toleranceMs;
    const identity: CallerIdentity = Object.freeze({
      id: payload.sub,
      via: 'jwt',
      claims: Object.freeze(payload),
      validUntilMs: notAfter,
    });
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    cache.set(cacheKey, {
      identity,
      notAfter,
      notBefore: payload.nbf === undefined ? 0 : payload.nbf * 1000 - toleranceMs,
    });
    return identity;
  };

  return {
    name: 'jwt',
    async: true,
    authenticate({ credentials, service, remoteAddress }) {
      if (credentials === undefined || !looksLikeJwt(credentials)) return undefined;
      const cacheKey = `${service}\n${credentials}`;
      const hit = cache.get(cacheKey);
      if (hit !== undefined) {
        const at = now();
        if (at < hit.notAfter && at >= hit.notBefore) return hit.identity;
        cache.delete(cacheKey);
        if (at >= hit.notAfter) throw new AuthFailure('token expired');
      }
      if (pending >= maxPending) {
        throw new RpcError('Overloaded', `${maxPending} token checks in progress: try again`);
      }
      const host = hostOf(remoteAddress);
      const ofAddress = pendingByAddress.get(host) ?? 0;
      if (ofAddress >= maxPendingPerAddress) {
        throw new RpcError(
          'Overloaded',
          `${ofAddress} token checks in progress for ${host}, its share: try again`,
        );
      }
      pending++;
      pendingByAddress.set(host, ofAddress + 1);
      return verify(credentials, service, cacheKey).finally(() => {
        pending--;
        const left = pendingByAddress.get(host)! - 1;
        if (left === 0) pendingByAddress.delete(host);
        else pendingByAddress.set(host, left);
      });
    },
  };
}
