import type { Attachments, Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import type { Serializer } from '../serialization/serializer.js';

/**
 * A call as the provider sees it. The AbortSignal is created only when someone reads it; it fires at
 * the caller's deadline (its reason a Timeout RpcError), when the caller cancels or its connection goes
 * away (Cancelled), or at the shutdown deadline (Shutdown): a handler that rejects with `signal.reason`
 * answers the caller with that code.
 */
export class ServerInvocation implements Invocation {
  #controller: AbortController | undefined;
  #responseAttachments: Attachments | undefined;
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
        if (remaining <= 0) this.abort(this.#deadlineExceeded());
        else {
          this.#timer = setTimeout(() => this.abort(this.#deadlineExceeded()), remaining);
          this.#timer.unref();
        }
      }
    }
    return this.#controller.signal;
  }

  #deadlineExceeded(): RpcError {
    return new RpcError('Timeout', `${this.service.name}.${this.method}: the caller's deadline passed`);
  }

  /**
   * Headers sent back with the answer (success or error): a provider filter or the handler sets them,
   * the consumer's filters read them on its invocation once the call returned.
   */
  get responseAttachments(): Attachments {
    this.#responseAttachments ??= {};
    return this.#responseAttachments;
  }

  set responseAttachments(value: Attachments) {
    this.#responseAttachments = value;
  }

  /** The response attachments to send, or undefined when there are none. */
  get answerAttachments(): Attachments | undefined {
    const attachments = this.#responseAttachments;
    if (attachments === undefined) return undefined;
    for (const _ in attachments) return attachments;
    return undefined;
  }

  /** Whether a signal was handed out (the connection then tracks this call for aborts). */
  get hasSignal(): boolean {
    return this.#controller !== undefined;
  }

  abort(reason: RpcError): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#controller?.abort(reason);
  }

  /** Releases the deadline timer once the call is answered. */
  finish(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#onSignal = undefined;
  }
}
