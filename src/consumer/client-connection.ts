/**
 * One long-lived, multiplexed connection from a consumer to a provider. Many calls are in flight at
 * once, matched by request id; frames are batched per tick; deadlines are enforced by one wheel; a
 * lost connection rejects every call in flight on it at once with a Network error. When the provider
 * announces it is going away, the connection takes no new calls and closes its side once every call it
 * sent is answered (the provider waits for that before closing).
 *
 * Answers are held to the same bounds as requests on a provider: an answer must come in the serializer
 * the call was made in (or, for an error, json); a compressed one only when this side asked for
 * compressed answers, and it inflates within its bounds; its elements are counted before it is
 * decoded; a frame must complete within `frameTimeoutMs`; partial frames draw on the pool's budget.
 * A provider that answers in another serializer, sends a frame too slowly or spends the budget is
 * treated as hostile: the connection is closed.
 */
import { fromErrorPayload } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import { messageOf, RpcError } from '../core/rpc-error.js';
import { type ByteBudget, createByteBudget } from '../protocol/byte-budget.js';
import type { ConnectionOptions } from '../protocol/connection-options.js';
import { EventName, type Frame, FrameFlag, FrameKind } from '../protocol/frame.js';
import { EMPTY_BODY, readEventName } from '../protocol/frame-writer.js';
import { openFramedConnection } from '../protocol/framed-connection.js';
import { NO_ATTACHMENTS, readAttachments } from '../protocol/metadata.js';
import { JSON_SERIALIZER_ID } from '../serialization/json.js';
import type { Serializer } from '../serialization/serializer.js';
import { type Transport, transportAddress } from '../transport/transport.js';
import { type AnswerLimits, ForeignSerializerError, readAnswer } from './answer-reader.js';
import { createDeadlineWheel } from './deadline-wheel.js';
import { PendingCall, type WireCall, type WireRoute } from './pending-call.js';

export type { WireRoute } from './pending-call.js';

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

export type { WireCall } from './pending-call.js';

export interface ClientConnection {
  readonly address: string;
  readonly state: ConnectionState;
  /** Calls awaiting a response. */
  readonly inFlight: number;
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
  call(
    route: WireRoute,
    args: unknown[],
    attachments: Attachments | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    oneway: boolean,
  ): Promise<unknown>;
  /** Sends a heartbeat now (tests, RTT probes). */
  ping(): void;
  /** Stops new calls, waits for those in flight (bounded by their deadlines), then closes. */
  close(): Promise<void>;
  /** Closes at once; calls in flight fail with `error` (default: Network, connection closed). */
  destroy(error?: RpcError): void;
}

export interface ConnectionEvents {
  /** The provider announced it is shutting down. */
  onGoAway?(connection: ClientConnection): void;
  /** A heartbeat answer arrived: the round-trip time, ms. */
  onHeartbeatRtt?(connection: ClientConnection, rttMs: number): void;
  /** The connection closed; `local` is true when this side closed it on purpose (close/destroy). */
  onClose?(connection: ClientConnection, error: RpcError, local: boolean): void;
  /** An answer was refused for what it carried (over a limit), or the provider broke the protocol. */
  onRefused?(connection: ClientConnection, reason: string): void;
}

const MAX_REQUEST_ID = 0xffffffff;

/** Where a connection goes: a provider's host and port, over a transport. */
export interface ConnectionTarget {
  readonly transport: Transport;
  readonly host: string;
  readonly port: number;
}

/**
 * Opens a connection. `serializers` are looked up by id for error answers in json; `partialFrames` is
 * the budget shared by the connections of one pool (by default, one of this connection's own).
 */
export function createClientConnection(
  target: ConnectionTarget,
  serializers: readonly (Serializer | undefined)[],
  options: ConnectionOptions,
  events: ConnectionEvents = {},
  partialFrames: ByteBudget = createByteBudget(options.maxPartialFrameBytes),
): ClientConnection {
  const { transport, host, port } = target;
  const address = transportAddress(host, port, transport.name);
  const jsonSerializer = serializers[JSON_SERIALIZER_ID];
  let lastCallAt = Date.now();
  const pending = new Map<number, PendingCall>();
  let state: ConnectionState = { kind: 'connecting' };
  /** Why the stream is closing (set by destroy() or a stream error before `close` arrives). */
  let failure: { error: RpcError; local: boolean } | undefined;
  let nextId = 1;
  const drainWaiters: Array<() => void> = [];

  const stream = transport.connect({ host, port });
  const framed = openFramedConnection(
    stream,
    {
      maxFrameBytes: options.maxFrameBytes,
      heartbeat: options.heartbeat,
      frameTimeoutMs: options.frameTimeoutMs,
      compressThresholdBytes: options.compressThresholdBytes,
      maxInflateRatio: options.maxInflateRatio,
      partialFrames,
      readPauseBytes: 0,
    },
    {
      onFrame(frame) {
        if (frame.kind === FrameKind.Response) onResponse(frame);
        else if (frame.kind === FrameKind.Event && readEventName(frame.meta) === EventName.GoAway) goAway();
      },
      onPong: (rttMs) => events.onHeartbeatRtt?.(connection, rttMs),
      onPeerFailure(peerFailure) {
        if (peerFailure.kind === 'silent') {
          fail(
            new RpcError(
              'Network',
              `no frame from ${address} for ${peerFailure.silentMs} ms: connection presumed dead`,
            ),
            false,
          );
          return;
        }
        const { error } = peerFailure;
        events.onRefused?.(connection, `closed the connection to ${address}: ${messageOf(error)}`);
        fail(
          new RpcError('Network', `protocol error from ${address}: ${messageOf(error)}`, { cause: error }),
          false,
        );
      },
      onStreamError(error) {
        fail(
          new RpcError('Network', `connection to ${address} failed: ${error.message}`, {
            cause: error,
            neverSent: state.kind === 'connecting',
          }),
          false,
        );
      },
      onClose,
    },
  );
  const writer = framed.writer;
  const answerLimits: AnswerLimits = {
    decode: { maxElements: options.maxDecodedElements },
    inflate: framed.inflate,
  };
  /** Flags every request carries: "I take compressed answers" when compression is on here. */
  const requestFlags = framed.inflate.enabled ? FrameFlag.AcceptsCompressed : 0;

  /** Notes why the stream is about to close (the first reason wins). */
  function fail(error: RpcError, local: boolean): void {
    failure ??= { error, local };
  }

  const wheel = createDeadlineWheel((id) => {
    const call = pending.get(id);
    if (call === undefined) return;
    pending.delete(id);
    call.fail(new RpcError('Timeout', `${call.call.route.label} timed out waiting for ${address}`));
    afterSettle();
  });

  const afterSettle = (): void => {
    if (pending.size > 0) return;
    lastCallAt = Date.now();
    if (drainWaiters.length > 0) for (const wake of drainWaiters.splice(0)) wake();
    // After "going away" the provider keeps answering what it received and waits for us to close, so
    // that no call sent before we read the announcement is cut off: we close once nothing is pending.
    if (state.kind === 'draining' && state.goneAway) framed.end();
  };

  const connectTimer = setTimeout(() => {
    destroy(
      new RpcError('Network', `connect to ${address} timed out after ${options.connectTimeoutMs} ms`),
      false,
    );
  }, options.connectTimeoutMs);
  connectTimer.unref();

  let readyPromise: Promise<void> | undefined = new Promise<void>((resolve, reject) => {
    stream.once('connect', () => {
      clearTimeout(connectTimer);
      if (state.kind === 'connecting') state = { kind: 'open' };
      resolve();
    });
    stream.once('close', () => reject(closedError()));
  });
  readyPromise.catch(() => {});

  const goAway = (): void => {
    if (state.kind === 'closed' || (state.kind === 'draining' && state.goneAway)) return;
    state = { kind: 'draining', goneAway: true };
    events.onGoAway?.(connection);
    afterSettle();
  };

  /** The error of a closed connection: the reason noted, else a plain close. */
  function closedError(): RpcError {
    if (state.kind === 'closed') return state.error;
    return (
      failure?.error ??
      new RpcError('Network', `connection to ${address} closed`, { neverSent: state.kind === 'connecting' })
    );
  }

  function onClose(): void {
    clearTimeout(connectTimer);
    wheel.clear();
    const error = closedError();
    const local = failure?.local ?? false;
    state = { kind: 'closed', error, local };
    const calls = [...pending.values()];
    pending.clear();
    for (const call of calls) call.fail(error);
    afterSettle();
    readyPromise = undefined;
    events.onClose?.(connection, error, local);
  }

  const onResponse = (frame: Frame): void => {
    const pendingCall = pending.get(frame.requestId);
    if (pendingCall === undefined) return; // timed out or cancelled already
    pending.delete(frame.requestId);
    pendingCall.detach();
    const call = pendingCall.call;
    let value: unknown;
    try {
      if (frame.meta.length > 0) call.responseAttachments = readAttachments(frame.meta, 0).attachments;
      value = readAnswer(frame, call.route.serializer, jsonSerializer, answerLimits);
    } catch (error) {
      const message = `cannot decode the response of ${call.route.label} from ${address}: ${messageOf(error)}`;
      call.failed(new RpcError('Serialization', message, { cause: error }));
      afterSettle();
      if (error instanceof ForeignSerializerError) {
        // an answer in a foreign serializer is hostile: close the connection
        events.onRefused?.(connection, `closed the connection to ${address}: ${messageOf(error)}`);
        destroy(
          new RpcError('Network', `protocol error from ${address}: ${messageOf(error)}`, { cause: error }),
          false,
        );
      } else events.onRefused?.(connection, `refused an answer from ${address}: ${message}`);
      return;
    }
    if (frame.status === 0) call.answered(value);
    else call.failed(fromErrorPayload(frame.status, value));
    afterSettle();
  };

  /** The caller gave up: fail the call with the abort reason as cause and tell the provider. */
  const cancel = (id: number): void => {
    const pendingCall = pending.get(id);
    if (pendingCall === undefined) return;
    pending.delete(id);
    writer.event(EventName.Cancel, 0, EMPTY_BODY, id);
    pendingCall.fail(cancelled(pendingCall.call));
    afterSettle();
  };

  /** Why `call` cannot be sent now, or undefined; encodes it into `encoded` when it can. */
  const refusal = (call: WireCall): RpcError | undefined => {
    if (state.kind === 'closed') return state.error;
    if (state.kind === 'draining') {
      const why = state.goneAway ? 'is going away and takes no new calls' : 'is closing';
      return new RpcError('Shutdown', `${address} ${why}`, { neverSent: true });
    }
    if (writer.queuedBytes > options.maxQueuedBytes) {
      return new RpcError(
        'Overloaded',
        `${address}: more than ${options.maxQueuedBytes} bytes queued for sending`,
        {
          neverSent: true,
        },
      );
    }
    if (call.signal?.aborted) return cancelled(call);
    try {
      encoded = call.route.serializer.encode(call.args);
    } catch (error) {
      return new RpcError(
        'Serialization',
        `cannot encode the arguments of ${call.route.label}: ${messageOf(error)}`,
        {
          cause: error,
          neverSent: true,
        },
      );
    }
    return undefined;
  };
  let encoded: Uint8Array = EMPTY_BODY;

  const send = (call: WireCall): void => {
    const refused = refusal(call);
    if (refused !== undefined) {
      call.failed(refused);
      return;
    }
    const { route, signal } = call;
    let body = encoded;
    encoded = EMPTY_BODY;
    let flags = requestFlags;
    const compressed = framed.compress(body);
    if (compressed !== undefined) {
      body = compressed;
      flags |= FrameFlag.Compressed;
    }
    const id = allocateId();
    const timeoutMs = call.attemptTimeoutMs;
    lastCallAt = Date.now();
    if (call.oneway) {
      writer.request(
        id,
        flags | FrameFlag.OneWay,
        route.serializer.id,
        route.prefix,
        timeoutMs,
        call.attachments,
        body,
      );
      call.sent = true;
      call.answered(undefined);
      return;
    }
    let onAbort: (() => void) | undefined;
    if (signal !== undefined) {
      onAbort = () => cancel(id);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    pending.set(id, new PendingCall(call, onAbort));
    if (timeoutMs > 0) wheel.add(id, lastCallAt + timeoutMs);
    writer.request(id, flags, route.serializer.id, route.prefix, timeoutMs, call.attachments, body);
    call.sent = true;
  };

  const destroy = (error?: RpcError, local = true): void => {
    if (stream.destroyed) return;
    fail(error ?? new RpcError('Network', `connection to ${address} closed by this side`), local);
    framed.destroy();
  };

  const allocateId = (): number => {
    const id = nextId;
    nextId = nextId === MAX_REQUEST_ID ? 1 : nextId + 1;
    return id;
  };

  const connection: ClientConnection = {
    address,
    get state() {
      return state;
    },
    get inFlight() {
      return pending.size;
    },
    get heartbeatRttMs() {
      return framed.rttMs;
    },
    get lastActivity() {
      return framed.lastReceived;
    },
    get lastCallAt() {
      return lastCallAt;
    },
    ready() {
      if (state.kind === 'open' || state.kind === 'draining') return Promise.resolve();
      return readyPromise ?? Promise.reject(closedError());
    },
    send,
    call(route, args, attachments, timeoutMs, signal, oneway) {
      return new Promise<unknown>((resolve, reject) =>
        send({
          route,
          args,
          attachments,
          attemptTimeoutMs: timeoutMs,
          signal,
          oneway,
          sent: false,
          responseAttachments: NO_ATTACHMENTS,
          answered: resolve,
          failed: reject,
        }),
      );
    },
    ping: framed.ping,
    async close() {
      if (state.kind === 'closed') return;
      fail(new RpcError('Network', `connection to ${address} closed by this side`), true);
      if (state.kind !== 'draining') state = { kind: 'draining', goneAway: false };
      if (pending.size > 0) await new Promise<void>((wake) => drainWaiters.push(wake));
      if (!stream.destroyed) {
        await new Promise<void>((done) => {
          stream.once('close', () => done());
          framed.end();
        });
      }
    },
    destroy(error) {
      destroy(error);
    },
  };
  return connection;
}

/** The error of a call its caller aborted; the abort reason is its cause. */
function cancelled(call: WireCall): RpcError {
  return new RpcError('Cancelled', `${call.route.label} was cancelled by the caller`, {
    neverSent: false,
    cause: call.signal?.reason,
  });
}
