/**
 * The client certificate of a mutual-TLS connection as the caller's identity: its subject's common name
 * by default, or what `identityOf` makes of it (a SAN such as `URI:spiffe://…`). Only a certificate the
 * server verified against `server.tls.ca` counts.
 */
import type { CallerIdentity } from '../core/invocation.js';
import { type Authenticator, AuthFailure } from './authenticator.js';
import type { PeerCertificate } from './peer-certificate.js';

export interface MtlsAuthenticatorOptions {
  /** The identity's id from the certificate; default: its common name. Return undefined to refuse it. */
  identityOf?: (peer: PeerCertificate) => string | undefined;
}

export function mtlsAuthenticator(options: MtlsAuthenticatorOptions = {}): Authenticator {
  const identityOf = options.identityOf ?? ((peer: PeerCertificate) => peer.commonName || undefined);
  const known = new WeakMap<PeerCertificate, CallerIdentity>();
  return {
    name: 'mtls',
    authenticate({ peer }) {
      if (peer === undefined) return undefined;
      const cached = known.get(peer);
      if (cached !== undefined) return cached;
      if (!peer.authorized) {
        throw new AuthFailure(
          `client certificate not trusted (${peer.authorizationError ?? 'not verified'})`,
        );
      }
      const id = identityOf(peer);
      if (id === undefined || id === '') throw new AuthFailure('client certificate names no identity');
      const identity: CallerIdentity = Object.freeze({ id, via: 'mtls' });
      known.set(peer, identity);
      return identity;
    },
  };
}
