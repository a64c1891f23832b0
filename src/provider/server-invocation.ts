/**
 * A call as the provider sees it, from the wire or in-process: what the provider filters and the
 * handler read (`callContext()`), and what the dispatcher needs to answer it.
 *
 * The AbortSignal is created only when someone reads it; it fires at the caller's deadline (its reason a
 * Timeout RpcError), when the caller cancels or its connection goes away (Cancelled), or at the shutdown
 * deadline (Shutdown): a handler that rejects with `signal.reason` answers the caller with that code.
 */

import type { ErrorDeclaration } from '../core/error-payload.js';
import { type Attachments, type CallerIdentity, nonEmptyAttachments } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import type { Admission, AdmittedInvocation } from '../filters/admission.js';
import type { AuthenticatedInvocation } from '../filters/auth.js';
import type { DeadlineInvocation } from '../filters/deadline.js';
import { argumentsNotDecoded, type EncodedInvocation } from '../filters/decode-arguments.js';
import type { MeteredInvocation } from '../filters/metrics-server.js';
import type { ObservedInvocation } from '../filters/observe-server.js';
import { type CallPriority, isCallPriority, PRIORITY_ATTACHMENT } from '../governance/call-priority.js';
import { callIdFrom } from '../observability/call-id.js';
import { UNCOMPRESSED } from '../protocol/compression.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import type { PresentedCredentials } from '../security/presented-credentials.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ArgumentsReader } from './arguments-reader.js';
import { type MeteredStreamPort, meteredPort } from './metered-stream.js';
import type { StreamPort } from './stream-port.js';

const NO_ARGS: unknown[] = [];

/** The method a call is for, as the service table exported it (service-table.ts `ExportedMethod`). */
export interface InvokedMethod {
  /** The service's definition (its key and its declared errors). */
  readonly service: ServiceKey & { readonly errors: readonly ErrorDeclaration[] };
  readonly name: string;
  readonly label: string;
  readonly declaration: {
    readonly idempotent?: boolean | undefined;
    readonly priority?: CallPriority | undefined;
  };
}

/**
 * What an entry (provider/entry.ts) builds a server invocation from: the method (its key, label,
 * idempotence and declared errors come from it) and what the call carries.
 */
export interface ServerInvocationInit {
  readonly method: InvokedMethod;
  readonly attachments: Attachments;
  /** Epoch ms after which the caller gave up; 0 for none. */
  readonly deadline: number;
  readonly oneway: boolean;
  /** The caller's address (`injvm` in-process). */
  readonly remoteAddress: string;
  /** Whether the caller marked the call idempotent (in-process). Default: the method's declaration. */
  readonly idempotent?: boolean;
  /** The request id of the entry's framing (0 where it has none). */
  readonly requestId?: number;
  /** The serializer the arguments are read and the answer written in (none in-process). */
  readonly serializer?: Serializer | undefined;
  /** The caller's hold on the provider's limits. */
  readonly admission: Admission;
  /** Told when a filter or the handler first reads `signal` (the entry then tracks the call for aborts). */
  readonly onSignal?: ((invocation: ServerInvocation) => void) | undefined;
  /** The client certificate the call's own connection presented. */
  readonly peerCertificate?: PeerCertificate | undefined;
  /** The credentials the call's connection presented once (an `authenticate` event), current when it was read. */
  readonly presented?: PresentedCredentials | undefined;
  /** The compressor id the consumer takes answers in; absent or -1 (UNCOMPRESSED) for none. */
  readonly answerCompression?: number;
  /** The entry's own handle on the caller (the in-process call, the HTTP response). */
  readonly origin?: unknown;
  /** Arguments already decoded (in-process). */
  readonly args?: unknown[];
  /** Reads the encoded arguments `body` (from the wire, HTTP): measured by admission, decoded by decode. */
  readonly reader?: ArgumentsReader;
  /** The request's encoded argument bytes (a view of the frame, valid while the start hooks run). */
  readonly body?: Buffer;
  /** The compressor id of `body`; absent or -1 (UNCOMPRESSED) for none. */
  readonly compression?: number;
  /** The stream this call opened (a method declared `stream`, from the wire); absent for a unary call. */
  readonly stream?: StreamPort | undefined;
  /** The call's id (in-process: the consumer's); default the caller's `callisto-call-id` when well-formed, else a new one. */
  readonly callId?: string | undefined;
}
const NO_ERRORS: readonly ErrorDeclaration[] = [];

export class ServerInvocation
  implements
    AdmittedInvocation,
    AuthenticatedInvocation,
    DeadlineInvocation,
    EncodedInvocation,
    ObservedInvocation,
    MeteredInvocation
{
  #controller: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #onSignal: ((invocation: ServerInvocation) => void) | undefined;
  #responseAttachments: Attachments | undefined;
  #reader: ArgumentsReader | undefined;
  #body: Buffer | undefined;
  /** The compressor id of the encoded body, -1 for none. */
  #compression = -1;
  #args: unknown[] = NO_ARGS;
  readonly #invoked: InvokedMethod;
  /** Set once a response (or a shutdown error) was sent for this call, or the caller cancelled it. */
  answered = false;
  /**
   * Set once the call ended (`finish`): calls its method still makes (background work) inherit no
   * deadline and no cancellation from it any more (consumer/hop-context.ts).
   */
  ended = false;
  /** performance.now() when the `observe` filter started measuring; 0 when nobody listens. */
  observedAt = 0;
  /** When the `metrics-server` filter started measuring the call. */
  meteredAt = 0;
  /** performance.now() when its method started running, for a metered call (0: not yet, or not metered). */
  runAt = 0;
  /** When the `deadline` filter admitted the call (deadline-aware admission; 0: not measured). */
  admittedAt = 0;
  /** When the `admission` filter admitted the call under the adaptive limit (performance.now()). */
  limitedAt = 0;
  /** The request's encoded argument bytes (0 in-process). */
  requestBytes = 0;
  /** Decoded argument elements this call holds of the limits (counted before decoding). */
  elements = 0;
  /** The errors the service declares (they travel with their fields). */
  declared: readonly ErrorDeclaration[] = NO_ERRORS;
  /** On a request: the compressor id the consumer takes answers in; -1 (UNCOMPRESSED) for none. */
  answerCompression = -1;
  /** For in-process calls: the consumer's call, told how this one ended. */
  origin: unknown = undefined;
  /** The caller, once the `auth` filter authenticated it. */
  identity: CallerIdentity | undefined = undefined;
  /** The client certificate the call's own connection presented (mutual TLS), for the `auth` filter. */
  peerCertificate: PeerCertificate | undefined = undefined;
  /** The credentials the call's connection presented once, for the `auth` filter (which takes them). */
  presented: PresentedCredentials | undefined = undefined;
  /** The stream this call opened, metered (metered-stream.ts); undefined for a unary call. */
  stream: MeteredStreamPort | undefined = undefined;

  readonly service: ServiceKey;
  readonly method: string;
  /** `Service.method`, for messages. */
  readonly label: string;
  public attachments: Attachments;
  public deadline: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  public remoteAddress: string;
  readonly requestId: number;
  /** The serializer the answer is written in (none in-process). */
  readonly serializer: Serializer | undefined;
  /** The caller's hold on the provider's limits. */
  readonly admission: Admission;
  /** The call's id: the consumer's, or one made here (docs/observability.md). */
  readonly callId: string;

  constructor(init: ServerInvocationInit) {
    const { method } = init;
    this.#invoked = method;
    this.service = method.service;
    this.method = method.name;
    this.label = method.label;
    this.idempotent = init.idempotent ?? method.declaration.idempotent ?? false;
    this.declared = method.service.errors;
    this.attachments = init.attachments;
    this.deadline = init.deadline;
    this.oneway = init.oneway;
    this.remoteAddress = init.remoteAddress;
    this.requestId = init.requestId ?? 0;
    this.serializer = init.serializer;
    this.admission = init.admission;
    this.callId = init.callId ?? callIdFrom(init.attachments);
    this.#onSignal = init.onSignal;
    if (init.peerCertificate !== undefined) this.peerCertificate = init.peerCertificate;
    if (init.presented !== undefined) this.presented = init.presented;
    if (init.answerCompression !== undefined) this.answerCompression = init.answerCompression;
    if (init.origin !== undefined) this.origin = init.origin;
    if (init.stream !== undefined) this.stream = meteredPort(init.stream);
    if (init.args !== undefined) this.#args = init.args;
    if (init.reader !== undefined) this.encoded(init.reader, init.body!, init.compression ?? UNCOMPRESSED);
  }

  /**
   * The request's encoded arguments (a view of the frame, valid while the filters' start hooks run),
   * measured by the admission filter and decoded by the decode filter, with `reader`.
   */
  encoded(reader: ArgumentsReader, body: Buffer, compression: number): void {
    this.#reader = reader;
    this.#body = body;
    this.#compression = compression;
    this.requestBytes = body.length;
  }

  measureArguments(): number {
    const reader = this.#reader;
    if (reader === undefined) return this.elements;
    const measured = reader.measure(this.#body!, this.#compression, this.serializer!, this.label);
    this.#body = undefined;
    if (typeof measured !== 'number') {
      this.#reader = undefined;
      throw measured;
    }
    this.elements = measured;
    return measured;
  }

  /**
   * The call's priority under the adaptive limit: the caller's `callisto-priority` attachment when it
   * names one, else the method's declared one, else `default` (governance/call-priority.ts).
   */
  get priority(): CallPriority {
    const asked = this.attachments[PRIORITY_ATTACHMENT];
    if (asked !== undefined && isCallPriority(asked)) return asked;
    return this.#invoked.declaration.priority ?? 'default';
  }

  /** The arguments; decoded by the `decode` filter for a call from the wire (reading them before throws). */
  get args(): unknown[] {
    if (this.#reader !== undefined) throw argumentsNotDecoded(this.label);
    return this.#args;
  }

  set args(value: unknown[]) {
    this.#args = value;
  }

  decodeArguments(): void {
    const reader = this.#reader;
    if (reader === undefined) return;
    this.#reader = undefined;
    this.args = reader.decode(this.serializer!, this.label);
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
    return new RpcError('Timeout', `${this.label}: the caller's deadline passed`);
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
    return nonEmptyAttachments(this.#responseAttachments);
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

  /** Releases the deadline timer once the call ended. */
  finish(): void {
    this.ended = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#onSignal = undefined;
    // measured but never decoded (refused in between): the reader lets go of the bytes
    this.#reader?.forget();
    this.#reader = undefined;
    this.#body = undefined;
  }
}
