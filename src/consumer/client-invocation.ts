import type { Attachments, Invocation } from '../core/invocation.js';
import type { ServiceKey } from '../core/service-key.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { MethodRoute } from './client-connection.js';

/** A call as the consumer builds it; carries the precomputed wire route of its method. */
export class ClientInvocation implements Invocation {
  remoteAddress: string | undefined = undefined;
  /** The attachments of the provider's answer to the last attempt (none until it answered). */
  responseAttachments: Attachments = NO_ATTACHMENTS;
  /** Absolute deadline (Date.now clock), 0 for none. */
  deadline: number;

  /** @internal */
  constructor(
    readonly service: ServiceKey,
    readonly method: string,
    readonly args: unknown[],
    public attachments: Attachments,
    /** The call's whole time budget, ms (0 for none). */
    readonly timeoutMs: number,
    readonly signal: AbortSignal | undefined,
    readonly oneway: boolean,
    readonly idempotent: boolean,
    /** @internal The method's precomputed wire route (its type is not part of the public API). */
    readonly route: MethodRoute,
  ) {
    this.deadline = timeoutMs > 0 ? Date.now() + timeoutMs : 0;
  }

  /** The same call with a fresh deadline and no signal, for background retries. */
  renew(): ClientInvocation {
    return this.renewFor(undefined);
  }

  /** The same call with a fresh deadline and the given signal (forking, broadcast). */
  renewFor(signal: AbortSignal | undefined): ClientInvocation {
    return new ClientInvocation(
      this.service,
      this.method,
      this.args,
      { ...this.attachments },
      this.timeoutMs,
      signal,
      this.oneway,
      this.idempotent,
      this.route,
    );
  }
}
