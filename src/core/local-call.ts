/**
 * The contract of in-process calls (`injvm`) between the consumer (consumer/in-process.ts, which hands a
 * call over) and the provider (provider/local-calls.ts, which serves it): here, below both, so neither
 * stack imports the other.
 */
import type { Attachments } from './invocation.js';
import type { RpcError } from './rpc-error.js';
import type { ServiceKey } from './service-key.js';

/** One in-process call as the consumer hands it over, and how it is told the outcome. */
export interface LocalCall {
  readonly service: ServiceKey;
  readonly method: string;
  readonly args: readonly unknown[];
  readonly attachments: Attachments | undefined;
  /** The consumer's call id (the served invocation keeps it). */
  readonly callId?: string | undefined;
  readonly deadline: number;
  readonly oneway: boolean;
  readonly idempotent: boolean;
  /** The stream this call opens (a method declared `stream`); absent for a unary call. */
  readonly stream?: LocalStream | undefined;
  /** Set once the provider took the call. */
  sent: boolean;
  /** Set to the answer's attachments before `answered` or `failed`. */
  responseAttachments: Attachments;
  answered(value: unknown): void;
  failed(error: RpcError): void;
}

/**
 * The consumer's side of an in-process stream: the caller's input (client and two-way streams), and
 * where the handler's messages go (server and two-way streams), by reference, with backpressure.
 */
export interface LocalStream {
  readonly kind: 'server' | 'client' | 'bidi';
  readonly input: AsyncIterable<unknown> | undefined;
  /** Hands one message to the caller; a promise when the caller is behind: resolves once it caught up. */
  deliver(value: unknown): Promise<void> | undefined;
}

/** A call being served, which its caller may give up. */
export interface LocalHandle {
  /** The caller gave up: the handler's signal fires with `reason`, and its answer is dropped. */
  cancel(reason: RpcError): void;
}

/** What the app's provider offers its own consumers. */
export interface LocalProvider {
  /** Whether the app provides `key` now. */
  provides(key: ServiceKey): boolean;
  /** Serves `call`; how it ended is told to it (always asynchronously for a handler that awaits). */
  serve(call: LocalCall): LocalHandle;
}
