/**
 * What a client connection sends and whom it tells how a call ended. The connection owns this interface;
 * the consumer's layers above implement it (their invocation object), so results flow back down-up
 * through it, synchronously, with no promise of the connection's own and no call from the connection
 * into cluster or load-balancing code.
 */
import { IdTable } from '../core/id-table.js';
import type { Attachments } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import { LOAD_ATTACHMENT } from '../loadbalance/load-report.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { Compressor } from '../serialization/compression/compressor.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ClientStream } from './client-stream.js';

/** A method as the wire needs it (consumer/method-route.ts makes them). */
export interface WireRoute {
  /** The encoded service, version, group and method (protocol/metadata.ts). */
  readonly prefix: Buffer;
  readonly serializer: Serializer;
  /** The compressor of its requests and of the answers it takes (`consumer.compressor`). Default deflate. */
  readonly compressor?: Compressor | undefined;
  /** For error messages. */
  readonly label: string;
}

/** What the wire part of an attempt reads and writes (consumer/call-attempt.ts is the consumer's). */
export interface WireAttempt {
  /** The budget sent with the request and enforced here, ms until the call's deadline; 0 for none. */
  readonly timeoutMs: number;
  /** Set by the connection once the request is queued for the wire: the provider may see it. */
  sent: boolean;
  /** Set by the connection, before `answered` or `failed`, to the attachments of the provider's answer. */
  responseAttachments: Attachments;
  /** The provider's load report that came with the answer (`callisto-load`), kept out of `responseAttachments`. */
  loadReport?: string | undefined;
}

/**
 * Gives the attempt the answer's attachments: the provider's load report (internal, read by the
 * `endpoint-stats` filter) is taken out of them, so filters and the application see only their own.
 */
export function receiveAttachments(attempt: WireAttempt, attachments: Attachments): void {
  const load = attachments[LOAD_ATTACHMENT];
  if (load === undefined) {
    attempt.responseAttachments = attachments;
    return;
  }
  delete attachments[LOAD_ATTACHMENT];
  attempt.loadReport = load;
  attempt.responseAttachments = Object.keys(attachments).length === 0 ? NO_ATTACHMENTS : attachments;
}

export interface WireCall {
  /** The method's route and serializer. */
  readonly route: WireRoute;
  readonly args: readonly unknown[];
  readonly attachments: Attachments | undefined;
  /** The call's id, sent with every attempt (as the `callisto-call-id` attachment). */
  readonly callId?: string | undefined;
  /** Aborting it fails the call with Cancelled (the reason as its cause) and tells the provider. */
  readonly signal: AbortSignal | undefined;
  readonly oneway: boolean;
  /**
   * Whether the call may run twice: a suspected (silent) connection fails its waiting idempotent calls
   * so they are retried elsewhere, and lets the others wait. Default false.
   */
  readonly idempotent?: boolean;
  /** The stream this call opens (a method declared `stream`); absent for a unary call. */
  readonly stream?: ClientStream | undefined;
  /** The attempt being sent: its budget, and what the connection reports into. */
  readonly attempt: WireAttempt;
  /** The call succeeded with `value` (a one-way call: once queued, with undefined). */
  answered(value: unknown): void;
  /** The call failed; never called after `answered`, and at most once. */
  failed(error: RpcError): void;
}

/** A call as any target takes it: a connection (the wire part) or the in-process provider (all of it). */
export interface OutboundCall extends WireCall {
  readonly service: ServiceKey;
  readonly method: string;
  /** Absolute deadline (Date.now clock), 0 for none. */
  readonly deadline: number;
  readonly idempotent: boolean;
}

/**
 * The calls of one connection waiting for their answers, by request id. A call is stored as it is (no
 * wrapper per call); only a call with a signal has an abort listener, kept beside it.
 */
export class PendingCalls {
  // not Maps: one entry added and removed per call churns a Map's tables (core/id-table.ts)
  readonly #calls = new IdTable<WireCall>();
  readonly #aborts = new IdTable<() => void>();

  get size(): number {
    return this.#calls.size;
  }

  /** Tracks `call` as `id`; `onAbort` (for a call with a signal) listens to its signal until it ends. */
  add(id: number, call: WireCall, onAbort: (() => void) | undefined): void {
    this.#calls.set(id, call);
    if (onAbort !== undefined) {
      this.#aborts.set(id, onAbort);
      call.signal!.addEventListener('abort', onAbort, { once: true });
    }
  }

  /** Stops tracking the call of `id` and returns it (its abort listener removed); undefined when none. */
  take(id: number): WireCall | undefined {
    const call = this.#calls.get(id);
    if (call === undefined) return undefined;
    this.#calls.delete(id);
    if (call.signal !== undefined) this.#detach(id, call.signal);
    return call;
  }

  /** Stops tracking the calls `which` selects and returns them with their ids. */
  takeIf(which: (call: WireCall) => boolean): Array<readonly [id: number, call: WireCall]> {
    const taken: Array<readonly [number, WireCall]> = [];
    for (const [id, call] of this.#calls.entries()) {
      if (!which(call)) continue;
      this.#calls.delete(id);
      if (call.signal !== undefined) this.#detach(id, call.signal);
      taken.push([id, call]);
    }
    return taken;
  }

  /** Stops tracking every call and returns them. */
  takeAll(): WireCall[] {
    const calls: WireCall[] = [];
    for (const [id, call] of this.#calls.entries()) {
      if (call.signal !== undefined) this.#detach(id, call.signal);
      calls.push(call);
    }
    this.#calls.clear();
    return calls;
  }

  #detach(id: number, signal: AbortSignal): void {
    const onAbort = this.#aborts.get(id);
    if (onAbort === undefined) return;
    this.#aborts.delete(id);
    signal.removeEventListener('abort', onAbort);
  }
}
