/**
 * What the connection pool holds of a connection to a provider: its address, lifecycle and load, and
 * how calls are sent on it. client-connection.ts is the connection; failed-connection.ts stands in for
 * one that could not be opened.
 */
import type { Attachments } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { Transport } from '../transport/transport.js';
import type { WireCall, WireRoute } from './pending-call.js';

/**
 * The lifecycle of a connection, one tagged value: `connecting`; `open`; `draining` (no new calls: the
 * provider said it is going away, or this side is closing, and the connection closes once the calls in
 * flight are answered); `closed`, with the error calls get from now on and whether this side closed it.
 */
export type ConnectionState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'open' }
  | { readonly kind: 'draining'; readonly goneAway: boolean }
  | { readonly kind: 'closed'; readonly error: RpcError; readonly local: boolean };

/** How `ClientConnection.call` sends a call (every field optional). */
export interface WireCallOptions {
  readonly attachments?: Attachments | undefined;
  /** The call's budget, ms (sent with the request and enforced here); 0 or absent for none. */
  readonly timeoutMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Fire-and-forget: answered `undefined` once queued. */
  readonly oneway?: boolean | undefined;
}

export interface ClientConnection {
  readonly address: string;
  readonly state: ConnectionState;
  /** Calls awaiting a response. */
  readonly inFlight: number;
  /** Streams open on this connection. */
  readonly openStreams: number;
  /**
   * Nothing arrived for `suspectAfterMs` while calls waited (a ping unanswered): presumed cut off, given
   * no new attempt until something arrives (consumer/suspicion.ts).
   */
  readonly suspected: boolean;
  /** When a frame was last received, heartbeats included (ms, Date.now clock). */
  readonly lastActivity: number;
  /**
   * When a call was last sent or the last call in flight ended (ms, Date.now clock): what "unused"
   * means for the idle timeout. Heartbeats do not count.
   */
  readonly lastCallAt: number;
  /** Round-trip time of the last heartbeat, ms (0 until measured). */
  readonly heartbeatRttMs: number;
  /** Resolves once connected; rejects with a Network error when the connection cannot be opened. */
  ready(): Promise<void>;
  /**
   * Sends a call; how it ends is told to the call itself (`answered`, `failed`), synchronously when it
   * cannot be sent. A one-way call is answered `undefined` once queued.
   */
  send(call: WireCall): void;
  /** `send` as a promise, for callers that hold no call object (tools, tests). */
  call(route: WireRoute, args: unknown[], options?: WireCallOptions): Promise<unknown>;
  /** Sends a heartbeat now (tests, RTT probes). */
  ping(): void;
  /** Stops new calls, waits for those in flight (bounded by their deadlines), then closes. */
  close(): Promise<void>;
  /** Closes at once; calls in flight fail with `error` (default: Network, connection closed). */
  destroy(error?: RpcError): void;
}

/**
 * `ClientConnection.call` for any connection: `send` with a call object made from `options`, as a
 * promise (the wire, HTTP and gRPC connections share it).
 */
export function callBySending(
  send: (call: WireCall) => void,
  route: WireRoute,
  args: unknown[],
  options: WireCallOptions = {},
): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) =>
    send({
      route,
      args,
      attachments: options.attachments,
      signal: options.signal,
      oneway: options.oneway ?? false,
      attempt: { timeoutMs: options.timeoutMs ?? 0, sent: false, responseAttachments: NO_ATTACHMENTS },
      answered: resolve,
      failed: reject,
    }),
  );
}

export interface ConnectionEvents {
  /**
   * The provider announced it is shutting down; `addressStays` when only this process leaves and the
   * address stays served (a retiring worker of `server.workers`): a new connection reaches another.
   */
  onGoAway?(connection: ClientConnection, addressStays: boolean): void;
  /** A heartbeat answer arrived: the round-trip time, ms, and the load report it carried. */
  onHeartbeatRtt?(connection: ClientConnection, rttMs: number, load: string | undefined): void;
  /** The connection went silent while calls waited (suspicion.ts); its waiting idempotent calls failed. */
  onSuspect?(connection: ClientConnection, silentMs: number): void;
  /** Something arrived from a suspected connection: it takes calls again. */
  onSuspectCleared?(connection: ClientConnection): void;
  /** The connection closed; `local` is true when this side closed it on purpose (close/destroy). */
  onClose?(connection: ClientConnection, error: RpcError, local: boolean): void;
  /** An answer was refused for what it carried (over a limit), or the provider broke the protocol. */
  onRefused?(connection: ClientConnection, reason: string): void;
}

/** Where a connection goes: a provider's host and port, over a transport. */
export interface ConnectionTarget {
  readonly transport: Transport;
  readonly host: string;
  readonly port: number;
}
