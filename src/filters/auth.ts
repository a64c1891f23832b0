/**
 * `auth` (provider): the caller must prove who it is before anything else of the call runs
 * (its arguments are not even decoded). The credentials travel in the `authorization` attachment
 * (`Bearer <token>`); the filter takes them out of the attachments (no later filter, handler or log sees
 * them), asks each authenticator in turn, and sets `invocation.identity` from the first that knows the
 * caller. Otherwise the call is refused with `Unauthorized` and a reason that never quotes the
 * credentials (`credentials required`, `token expired`, …).
 *
 * With synchronous authenticators only (tokens, mutual TLS) the filter is a pair of hooks (no promise);
 * with one that may answer later (JWT) it wraps the rest of the chain.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Attachments, CallerIdentity, Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import {
  AUTH_ATTACHMENT,
  type Authenticator,
  AuthFailure,
  type AuthRequest,
  credentialsOf,
} from '../security/authenticator.js';
import type { PeerCertificate } from '../security/peer-certificate.js';

/**
 * What the filter reads of a provider's invocation beyond the attachments: the client certificate of
 * the connection that carried the call (mutual TLS), as that connection's own TLS socket presented it —
 * never looked up by address, which another connection can share.
 */
export interface AuthenticatedInvocation extends Invocation {
  readonly peerCertificate?: PeerCertificate | undefined;
}

export interface AuthFilterOptions {
  /** Asked in order; the first that returns an identity wins. */
  readonly authenticators: readonly Authenticator[];
  /** Told of every refusal (no credentials in it), e.g. for a rate-limited log line. */
  readonly onRefused?: ((message: string) => void) | undefined;
}

/** The invocation's credentials, taken out of its attachments. */
function takeCredentials(invocation: Invocation): string | undefined {
  const attachments = invocation.attachments;
  const raw = attachments[AUTH_ATTACHMENT];
  if (raw === undefined) return undefined;
  let rest: Attachments | undefined;
  for (const key in attachments) {
    if (key === AUTH_ATTACHMENT) continue;
    rest ??= {};
    rest[key] = attachments[key]!;
  }
  invocation.attachments = rest ?? NO_ATTACHMENTS;
  return credentialsOf(raw);
}

export function authFilter(options: AuthFilterOptions): NamedFilter<AuthenticatedInvocation> {
  const { authenticators, onRefused } = options;
  if (authenticators.length === 0) throw new TypeError('authFilter: give at least one authenticator');

  const refuse = (invocation: Invocation, request: AuthRequest, reason: string): RpcError => {
    const message = `${invocation.service.name}.${invocation.method}: ${reason}`;
    onRefused?.(`refused ${message} (from ${request.remoteAddress})`);
    return new RpcError('Unauthorized', message);
  };
  /** What an authenticator threw, as the caller sees it: its RpcError (e.g. Overloaded) as it is. */
  const refusal = (invocation: Invocation, request: AuthRequest, error: unknown): RpcError =>
    RpcError.is(error)
      ? error
      : refuse(invocation, request, error instanceof AuthFailure ? error.message : 'authentication failed');
  const missing = (request: AuthRequest): string =>
    request.credentials === undefined && request.peer === undefined
      ? 'credentials required'
      : 'credentials not accepted';

  /** Asks the authenticators from `from` on; an identity, a promise of one, or throws Unauthorized. */
  const ask = (
    invocation: Invocation,
    request: AuthRequest,
    from: number,
  ): CallerIdentity | Promise<CallerIdentity> => {
    for (let i = from; i < authenticators.length; i++) {
      let result: CallerIdentity | undefined | Promise<CallerIdentity | undefined>;
      try {
        result = authenticators[i]!.authenticate(request);
      } catch (error) {
        throw refusal(invocation, request, error);
      }
      if (result === undefined) continue;
      if (typeof (result as Promise<unknown>).then === 'function') {
        return (result as Promise<CallerIdentity | undefined>).then(
          (identity) => identity ?? ask(invocation, request, i + 1),
          (error: unknown) => {
            throw refusal(invocation, request, error);
          },
        );
      }
      return result as CallerIdentity;
    }
    throw refuse(invocation, request, missing(request));
  };

  const requestOf = (invocation: AuthenticatedInvocation): AuthRequest => {
    return {
      service: invocation.service.name,
      method: invocation.method,
      credentials: takeCredentials(invocation),
      remoteAddress: invocation.remoteAddress ?? '',
      peer: invocation.peerCertificate,
    };
  };

  if (!authenticators.some((authenticator) => authenticator.async === true)) {
    return defineFilter<AuthenticatedInvocation>({
      name: 'auth',
      position: 'provider',
      order: FILTER_ORDER.provider.auth,
      start(invocation) {
        invocation.identity = ask(invocation, requestOf(invocation), 0) as CallerIdentity;
      },
    });
  }
  // a step: a refusal may be thrown, and an identity known at once costs no promise
  return defineFilter<AuthenticatedInvocation>({
    name: 'auth',
    position: 'provider',
    order: FILTER_ORDER.provider.auth,
    step: (next) => (invocation) => {
      const identity = ask(invocation, requestOf(invocation), 0);
      if (typeof (identity as Promise<unknown>).then !== 'function') {
        invocation.identity = identity as CallerIdentity;
        return next(invocation);
      }
      return (identity as Promise<CallerIdentity>).then((known) => {
        invocation.identity = known;
        return next(invocation);
      });
    },
  });
}
