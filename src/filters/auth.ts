/**
 * `auth` (provider): the caller must prove who it is before anything else of the call runs
 * (its arguments are not even decoded). The credentials travel in the `authorization` attachment
 * (`Bearer <token>`); the filter takes them out of the attachments (no later filter, handler or log sees
 * them), asks each authenticator in turn, and sets `invocation.identity` from the first that knows the
 * caller. Otherwise the call is refused with `Unauthorized` and a reason that never quotes the
 * credentials (`credentials required`, `token expired`, …).
 *
 * A call that carries no credentials of its own, over a connection that presented credentials once
 * (the `authenticate` event, security/presented-credentials.ts), is made by the connection's caller:
 * the first call of each method asks the authenticators about the connection's token, the next ones
 * take the identity they gave, until that identity's proof expires (`validUntilMs`); then they ask
 * again. Credentials a call carries always win over its connection's.
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
import type { PresentedCredentials } from '../security/presented-credentials.js';

/**
 * What the filter reads of a provider's invocation beyond the attachments: the client certificate of
 * the connection that carried the call (mutual TLS), as that connection's own TLS socket presented it —
 * never looked up by address, which another connection can share.
 */
export interface AuthenticatedInvocation extends Invocation {
  readonly peerCertificate?: PeerCertificate | undefined;
  /**
   * The credentials the call's connection had presented when the call was read (an `authenticate`
   * event); the filter takes them (no later filter sees them).
   */
  presented?: PresentedCredentials | undefined;
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

  const requestOf = (invocation: AuthenticatedInvocation, credentials: string | undefined): AuthRequest => ({
    service: invocation.service.name,
    method: invocation.method,
    credentials,
    remoteAddress: invocation.remoteAddress ?? '',
    peer: invocation.peerCertificate,
  });

  /**
   * The caller of `invocation`: from the credentials it carries, else from its connection's (known
   * already, or asked about and kept); an identity, a promise of one, or throws Unauthorized.
   */
  const identify = (invocation: AuthenticatedInvocation): CallerIdentity | Promise<CallerIdentity> => {
    const presented = invocation.presented;
    if (presented === undefined || invocation.attachments[AUTH_ATTACHMENT] !== undefined) {
      return ask(invocation, requestOf(invocation, takeCredentials(invocation)), 0);
    }
    invocation.presented = undefined;
    const service = invocation.service.name;
    const method = invocation.method;
    const known = presented.known(service, method);
    if (known !== undefined) return known;
    const identity = ask(invocation, requestOf(invocation, presented.token), 0);
    if (typeof (identity as Promise<unknown>).then !== 'function') {
      presented.remember(service, method, identity as CallerIdentity);
      return identity;
    }
    return (identity as Promise<CallerIdentity>).then((proved) => {
      presented.remember(service, method, proved);
      return proved;
    });
  };

  if (!authenticators.some((authenticator) => authenticator.async === true)) {
    return defineFilter<AuthenticatedInvocation>({
      name: 'auth',
      position: 'provider',
      order: FILTER_ORDER.provider.auth,
      start(invocation) {
        invocation.identity = identify(invocation) as CallerIdentity;
      },
    });
  }
  // a step: a refusal may be thrown, and an identity known at once costs no promise
  return defineFilter<AuthenticatedInvocation>({
    name: 'auth',
    position: 'provider',
    order: FILTER_ORDER.provider.auth,
    step: (next) => (invocation) => {
      const identity = identify(invocation);
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
