/**
 * What a provider's connection knows of the credentials its consumer presented once, in an
 * `authenticate` event (docs/protocol.md, Events): the token, and for each service and method the
 * identity the authenticators gave for it, kept until the identity's proof expires
 * (`CallerIdentity.validUntilMs`, a token's `exp`). A call that carries no credentials of its own is
 * made by its connection's caller (filters/auth.ts): the first call of a method verifies the token, the
 * next ones cost a lookup, and a call after the expiry verifies it again (and is refused `token
 * expired` unless the consumer presented a fresh token first).
 *
 * A connection keeps the last MAX_PRESENTED_TOKENS tokens it presented, each with what it proved, so a
 * consumer whose references send different tokens over one connection pays a lookup per switch, not a
 * verification. Every call captures the token current when its request was read: a later
 * `authenticate` event never changes who an earlier call is.
 */
import type { CallerIdentity } from '../core/invocation.js';
import { MAX_TOKEN_LENGTH } from './token-authenticator.js';

/** Tokens a connection keeps, the current one included. */
export const MAX_PRESENTED_TOKENS = 4;

/** Longest token an `authenticate` event may carry, bytes (a longer one is a protocol error). */
export const MAX_PRESENTED_TOKEN_BYTES = MAX_TOKEN_LENGTH;

/** Methods a token keeps identities for; beyond, it forgets them all and verifies again. */
const MAX_KNOWN_METHODS = 1024;

/** One token a connection presented, and the identities it proved, by service and method. */
export class PresentedCredentials {
  readonly token: string;
  readonly #known = new Map<string, Map<string, CallerIdentity>>();
  #count = 0;

  constructor(token: string) {
    this.token = token;
  }

  /** The identity this token proved for `service.method`, while its proof holds. */
  known(service: string, method: string): CallerIdentity | undefined {
    const ofService = this.#known.get(service);
    if (ofService === undefined) return undefined;
    const identity = ofService.get(method);
    if (identity === undefined) return undefined;
    if (identity.validUntilMs !== undefined && Date.now() >= identity.validUntilMs) {
      ofService.delete(method);
      this.#count--;
      return undefined;
    }
    return identity;
  }

  /** Keeps what the authenticators said of this token for `service.method`. */
  remember(service: string, method: string, identity: CallerIdentity): void {
    if (this.#count >= MAX_KNOWN_METHODS) {
      this.#known.clear();
      this.#count = 0;
    }
    let ofService = this.#known.get(service);
    if (ofService === undefined) {
      ofService = new Map();
      this.#known.set(service, ofService);
    }
    if (!ofService.has(method)) this.#count++;
    ofService.set(method, identity);
  }
}

/** The tokens one connection presented; `current` is the one its next calls are made with. */
export interface ConnectionCredentials {
  readonly current: PresentedCredentials | undefined;
  /** The connection presented `token` (an `authenticate` event): it is current from now on. */
  present(token: string): void;
}

export function createConnectionCredentials(): ConnectionCredentials {
  /** Most recently presented last. */
  const kept: PresentedCredentials[] = [];
  let current: PresentedCredentials | undefined;
  return {
    get current() {
      return current;
    },
    present(token) {
      const at = kept.findIndex((presented) => presented.token === token);
      const presented = at >= 0 ? kept.splice(at, 1)[0]! : new PresentedCredentials(token);
      kept.push(presented);
      if (kept.length > MAX_PRESENTED_TOKENS) kept.shift();
      current = presented;
    },
  };
}
