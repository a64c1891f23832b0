import type { ServiceKey } from './service-key.js';

/** String headers that travel with a call (trace ids, auth tokens, user headers). */
export type Attachments = Record<string, string>;

/** `attachments` when it holds any key, else undefined (what to send with an answer); no allocation. */
export function nonEmptyAttachments(attachments: Attachments | undefined): Attachments | undefined {
  if (attachments === undefined) return undefined;
  for (const _ in attachments) return attachments;
  return undefined;
}

/**
 * Who a caller is, as a provider's `auth` filter established it (docs/security.md): the identity's `id`
 * (a consumer application's name, a token's subject, a certificate's common name) is what access rules
 * and the access log name; `via` says how it was proven (`token`, `jwt`, `mtls`, an authenticator's
 * name). Never the credentials themselves.
 */
export interface CallerIdentity {
  readonly id: string;
  readonly via: string;
  /** What the proof said about the caller (a token's verified claims), when it says more than the id. */
  readonly claims?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Epoch ms from which the proof no longer holds (a signed token's `exp`); undefined when it does not
   * expire. A connection that authenticated once is asked for its credentials again from then on.
   */
  readonly validUntilMs?: number | undefined;
}

/** One call, as it moves along the consumer's filter chain and the provider's. */
export interface Invocation {
  /** Which service (name, version, group). */
  readonly service: ServiceKey;
  /** The method's name. */
  readonly method: string;
  /** The call's arguments. */
  readonly args: unknown[];
  /** Headers sent with the call; filters may add to them. */
  attachments: Attachments;
  /** Absolute deadline (ms since epoch, `Date.now()` clock), or 0 for none. */
  deadline: number;
  /** Aborts the call; on the provider it fires at the deadline or when the caller goes away. */
  readonly signal: AbortSignal | undefined;
  /** Fire-and-forget: no response is expected. */
  readonly oneway: boolean;
  /** Whether the method may safely be executed more than once. */
  readonly idempotent: boolean;
  /** Peer address (`host:port`) once known: the chosen provider on the consumer, the caller on the provider. */
  remoteAddress?: string | undefined;
  /**
   * Headers of the answer. On the provider, filters and the handler (through `callContext()`) set them
   * and they travel back with the answer, success or error; on the consumer, filters read them once the
   * call (at the per-attempt position: the attempt) returned. Always present on Callisto's own
   * invocations; optional so that plain objects can stand in for an invocation.
   */
  responseAttachments?: Attachments;
  /** On the provider: the caller, once the `auth` filter authenticated it (undefined without auth). */
  identity?: CallerIdentity | undefined;
  /**
   * The call's id, the same on the consumer (every attempt) and the provider, written in the access log
   * and the log lines about the call (docs/observability.md). Always present on Callisto's own
   * invocations; optional so that plain objects can stand in for an invocation.
   */
  readonly callId?: string | undefined;
  /**
   * Set on a stream call (a method declared `stream`, docs/filters.md "Streams"): one invocation for the
   * whole stream, made when it opens. Undefined for a unary call.
   */
  readonly stream?: InvocationStream | undefined;
}

/** Which way a stream message went: `in` to this side (received), `out` from it (sent). */
export type StreamDirection = 'in' | 'out';

/** Told each message of a stream, as it goes (docs/filters.md "Streams"). */
export type StreamMessageListener = (direction: StreamDirection, message: unknown) => void;

/**
 * A stream call as its filters see it (`invocation.stream`): the kind, the messages so far each way
 * (read them in a filter's `end` for the whole stream's), and `onMessage` for a filter that wants each
 * message. On the provider `in` is what the consumer sent and `out` what the handler yielded; on the
 * consumer `in` is what the caller read and `out` what its input gave.
 */
export interface InvocationStream {
  readonly kind: 'server' | 'client' | 'bidi';
  /** Messages received so far (on the provider: taken by the handler; on the consumer: arrived). */
  readonly messagesIn: number;
  /** Messages sent so far (on the provider: yielded by the handler; on the consumer: taken from its input). */
  readonly messagesOut: number;
  /**
   * Calls `listener` for each message from now on (synchronously, as it goes; a listener that throws is
   * ignored). Register it in a filter's `start`; a stream without listeners pays nothing per message
   * beyond its two counts.
   */
  onMessage(listener: StreamMessageListener): void;
}

/** The one shape of every step of the call path. */
export type Invoker = (invocation: Invocation) => Promise<unknown>;

/** A filter wraps the next invoker: logging, auth, metrics, limits, retries. */
export type Filter = (next: Invoker) => Invoker;

/** Composes filters so that the first one listed runs first (outermost). */
export function composeFilters(filters: readonly Filter[], terminal: Invoker): Invoker {
  let invoker = terminal;
  for (let i = filters.length - 1; i >= 0; i--) {
    const filter = filters[i];
    if (filter) invoker = filter(invoker);
  }
  return invoker;
}
