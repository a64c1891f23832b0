import type { Attachments, Invocation } from '../core/invocation.js';
import type { ServiceKey } from '../core/service-key.js';
import type { Serializer } from '../serialization/serializer.js';

/**
 * A call as the provider sees it. The AbortSignal is created only when someone reads it; it fires at
 * the caller's deadline or when the caller's connection goes away.
 */
export class ServerInvocation implements Invocation {
  #controller: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #onSignal: ((invocation: ServerInvocation) => void) | undefined;
  /** Set once a response (or a shutdown error) was sent for this call. */
  answered = false;
  /** performance.now() at the start, only when the server-call channel has subscribers; else 0. */
  startedAt = 0;
  /** Decoded argument elements this call holds of its connection's budget (given back at the end). */
  elements = 0;

  constructor(
    readonly service: ServiceKey,
    readonly method: string,
    public args: unknown[],
    public attachments: Attachments,
    public deadline: number,
    readonly oneway: boolean,
    readonly idempotent: boolean,
    public remoteAddress: string,
    readonly requestId: number,
    readonly serializer: Serializer,
    onSignal: (invocation: ServerInvocation) => void,
  ) {
    this.#onSignal = onSignal;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      this.#onSignal?.(this);
      const remaining = this.deadline > 0 ? this.deadline - Date.now() : -1;
      if (this.deadline > 0) {
        if (remaining <= 0) this.abort('deadline exceeded');
        else {
          this.#timer = setTimeout(() => this.abort('deadline exceeded'), remaining);
          this.#timer.unref();
        }
      }
    }
    return this.#controller.signal;
  }

  /** Whether a signal was handed out (the connection then tracks this call for aborts). */
  get hasSignal(): boolean {
    return this.#controller !== undefined;
  }

  abort(reason: string): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#controller?.abort(new Error(reason));
  }

  /** Releases the deadline timer once the call is answered. */
  finish(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#onSignal = undefined;
  }
}
