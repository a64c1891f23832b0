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
import { maybeCompress } from '../protocol/compression.js';
import { EventName, type Frame, FrameFlag, FrameKind } from '../protocol/frame.js';
import { createFrameDecoder } from '../protocol/frame-decoder.js';
import { createFrameWriter, readEventName } from '../protocol/frame-writer.js';
import { ProtocolError } from '../protocol/protocol-error.js';
import { JSON_SERIALIZER_ID } from '../serialization/json.js';
import type { Serializer } from '../serialization/serializer.js';
import { type AnswerLimits, ForeignSerializerError, readAnswer } from './answer-reader.js';
import { createDeadlineWheel } from './deadline-wheel.js';
import { startFrameDeadline } from './frame-deadline.js';
import { startHeartbeat } from './heartbeat.js';
import type { MethodRoute } from './method-route.js';
import { type CallTracker, PendingCall } from './pending-call.js';
import { type Transport, transportAddress } from './transport.js';
import { type ConnectionOptions, PONG_QUEUE_LIMIT_BYTES } from './transport-options.js';

export type { MethodRoute } from './method-route.js';

export type ConnectionState = 'connecting' | 'open' | 'draining' | 'closed';

export type { CallTracker } from './pending-call.js';

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
  /** Sends a call. One-way calls resolve `undefined` once queued. */
  call(
    route: MethodRoute,
    args: unknown[],
    attachments: Attachments | undefined,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    oneway: boolean,
    tracker?: CallTracker,
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
  const answerLimits: AnswerLimits = {
    decode: { maxElements: options.maxDecodedElements },
    inflate: {
      enabled: options.compressThresholdBytes > 0,
      maxBytes: options.maxFrameBytes,
      maxRatio: options.maxInflateRatio,
    },
  };
  /** Flags every request carries: "I take compressed answers" when compression is on here. */
  const requestFlags = answerLimits.inflate.enabled ? FrameFlag.AcceptsCompressed : 0;
  const jsonSerializer = serializers[JSON_SERIALIZER_ID];
  let lastCallAt = Date.now();
  const pending = new Map<number, PendingCall>();
  let state: ConnectionState = 'connecting';
  let everOpened = false;
  let nextId = 1;
  let heartbeatRttMs = 0;
  let pingSentAt = 0;
  let closeError: RpcError | undefined;
  let closedLocally = false;
  const drainWaiters: Array<() => void> = [];
  /** The provider announced it is going away: no new calls; our side closes once every call is answered. */
  let goneAway = false;

  const socket = transport.connect({ host, port });
  const writer = createFrameWriter({
    write: (batch) => {
      if (!socket.destroyed && !socket.writableEnded) socket.write(batch);
    },
    get pendingBytes() {
      return socket.writableLength;
    },
  });

  const wheel = createDeadlineWheel((id) => {
    const call = pending.get(id);
    if (call === undefined) return;
    pending.delete(id);
    call.fail(new RpcError('Timeout', `${call.route.label} timed out waiting for ${address}`));
    afterSettle();
  });

  const afterSettle = (): void => {
    if (pending.size > 0) return;
    lastCallAt = Date.now();
    if (drainWaiters.length > 0) for (const wake of drainWaiters.splice(0)) wake();
    if (goneAway) endOurSide();
  };

  /**
   * After "going away": the provider keeps answering what it received and waits for us to close, so
   * that no call sent before we read the announcement is cut off. We close once nothing is pending.
   */
  const endOurSide = (): void => {
    if (socket.destroyed || socket.writableEnded) return;
    writer.flush();
    socket.end();
  };

  const connectTimer = setTimeout(() => {
    destroy(new RpcError('Network', `connect to ${address} timed out after ${options.connectTimeoutMs} ms`));
  }, options.connectTimeoutMs);
  connectTimer.unref();

  let readyPromise: Promise<void> | undefined = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      clearTimeout(connectTimer);
      if (state === 'connecting') state = 'open';
      everOpened = true;
      resolve();
    });
    socket.once('close', () =>
      reject(closeError ?? new RpcError('Network', `connection to ${address} closed`)),
    );
  });
  readyPromise.catch(() => {});

  const heartbeat = startHeartbeat(
    options.heartbeat,
    () => ping(),
    (silentMs) =>
      destroy(
        new RpcError('Network', `no frame from ${address} for ${silentMs} ms: connection presumed dead`),
      ),
  );

  const onResponse = (frame: Frame): void => {
    const call = pending.get(frame.requestId);
    if (call === undefined) return; // timed out or cancelled already
    pending.delete(frame.requestId);
    let value: unknown;
    try {
      value = readAnswer(frame, call.route.serializer, jsonSerializer, answerLimits);
    } catch (error) {
      const message = `cannot decode the response of ${call.route.label} from ${address}: ${messageOf(error)}`;
      call.fail(new RpcError('Serialization', message, { cause: error }));
      afterSettle();
      // an answer in a foreign serializer is hostile: close; one over a limit is refused, and logged
      if (error instanceof ForeignSerializerError) hostile(error);
      else events.onRefused?.(connection, `refused an answer from ${address}: ${message}`);
      return;
    }
    if (frame.status === 0) {
      call.settle();
      call.resolve(value);
    } else call.fail(fromErrorPayload(frame.status, value));
    afterSettle();
  };

  /** The provider broke the protocol or the limits: report it and close the connection. */
  const hostile = (error: unknown): void => {
    events.onRefused?.(connection, `closed the connection to ${address}: ${messageOf(error)}`);
    destroy(new RpcError('Network', `protocol error from ${address}: ${messageOf(error)}`, { cause: error }));
  };

  const decoder = createFrameDecoder(
    (frame) => {
      switch (frame.kind) {
        case FrameKind.Response:
          onResponse(frame);
          break;
        case FrameKind.Heartbeat:
          if ((frame.flags & FrameFlag.Pong) === 0) {
            // A provider flooding pings while reading nothing gets no more pongs than fit the bound.
            if (writer.queuedBytes <= PONG_QUEUE_LIMIT_BYTES) writer.heartbeat(frame.requestId, true);
          } else if (pingSentAt > 0) {
            heartbeatRttMs = Date.now() - pingSentAt;
            pingSentAt = 0;
            events.onHeartbeatRtt?.(connection, heartbeatRttMs);
          }
          break;
        case FrameKind.Event:
          if (readEventName(frame.meta) === EventName.GoAway && !goneAway) {
            goneAway = true;
            if (state === 'open') state = 'draining';
            events.onGoAway?.(connection);
            afterSettle();
          }
          break;
        default:
          break;
      }
    },
    { maxFrameBytes: options.maxFrameBytes, budget: partialFrames },
  );

  const frameDeadline = startFrameDeadline(decoder, options.frameTimeoutMs, (elapsedMs, bufferedBytes) =>
    hostile(
      new ProtocolError(
        `a frame started ${elapsedMs} ms ago is still incomplete (${bufferedBytes} bytes so far; frameTimeoutMs ${options.frameTimeoutMs})`,
      ),
    ),
  );

  socket.on('data', (chunk: Buffer) => {
    heartbeat.touch();
    try {
      decoder.push(chunk);
    } catch (error) {
      hostile(error);
      return;
    }
    frameDeadline.observe(heartbeat.lastReceived);
  });
  socket.on('error', (error: Error) => {
    closeError ??= new RpcError('Network', `connection to ${address} failed: ${error.message}`, {
      cause: error,
      neverSent: !everOpened,
    });
  });
  socket.on('close', () => {
    clearTimeout(connectTimer);
    heartbeat.stop();
    frameDeadline.stop();
    decoder.dispose();
    wheel.clear();
    state = 'closed';
    const error =
      closeError ?? new RpcError('Network', `connection to ${address} closed`, { neverSent: !everOpened });
    closeError = error;
    const calls = [...pending.values()];
    pending.clear();
    for (const call of calls) call.fail(error);
    afterSettle();
    readyPromise = undefined;
    events.onClose?.(connection, error, closedLocally);
  });

  const ping = (): void => {
    if (state === 'closed') return;
    pingSentAt = Date.now();
    writer.heartbeat(0, false);
  };

  const destroy = (error?: RpcError): void => {
    if (state === 'closed' && socket.destroyed) return;
    closeError ??= error ?? new RpcError('Network', `connection to ${address} closed by this side`);
    socket.destroy();
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
      return heartbeatRttMs;
    },
    get lastActivity() {
      return heartbeat.lastReceived;
    },
    get lastCallAt() {
      return lastCallAt;
    },
    ready() {
      if (state === 'open' || state === 'draining') return Promise.resolve();
      return readyPromise ?? Promise.reject(closeError);
    },
    call(route, args, attachments, timeoutMs, signal, oneway, tracker) {
      if (state === 'closed') return Promise.reject(closeError);
      if (goneAway) {
        return Promise.reject(
          new RpcError('Shutdown', `${address} is going away and takes no new calls`, { neverSent: true }),
        );
      }
      if (writer.queuedBytes > options.maxQueuedBytes) {
        return Promise.reject(
          new RpcError(
            'Overloaded',
            `${address}: more than ${options.maxQueuedBytes} bytes queued for sending`,
            {
              neverSent: true,
            },
          ),
        );
      }
      if (signal?.aborted) return Promise.reject(cancelled(route));
      let body: Uint8Array;
      try {
        body = route.serializer.encode(args);
      } catch (error) {
        return Promise.reject(
          new RpcError(
            'Serialization',
            `cannot encode the arguments of ${route.label}: ${messageOf(error)}`,
            {
              cause: error,
              neverSent: true,
            },
          ),
        );
      }
      let flags = requestFlags;
      const compressed = maybeCompress(body, options.compressThresholdBytes);
      if (compressed !== undefined) {
        body = compressed;
        flags |= FrameFlag.Compressed;
      }
      const id = allocateId();
      if (oneway) {
        lastCallAt = Date.now();
        writer.request(
          id,
          flags | FrameFlag.OneWay,
          route.serializer.id,
          route.prefix,
          timeoutMs,
          attachments,
          body,
        );
        return Promise.resolve(undefined);
      }
      return new Promise<unknown>((resolve, reject) => {
        let onAbort: (() => void) | undefined;
        if (signal !== undefined) {
          onAbort = () => {
            const call = pending.get(id);
            if (call === undefined) return;
            pending.delete(id);
            call.fail(cancelled(route));
            afterSettle();
          };
          signal.addEventListener('abort', onAbort, { once: true });
        }
        tracker?.callStarted();
        pending.set(id, new PendingCall(resolve, reject, route, signal, onAbort, tracker));
        lastCallAt = Date.now();
        if (timeoutMs > 0) wheel.add(id, lastCallAt + timeoutMs);
        writer.request(id, flags, route.serializer.id, route.prefix, timeoutMs, attachments, body);
      });
    },
    ping,
    async close() {
      if (state === 'closed') return;
      closedLocally = true;
      state = 'draining';
      if (pending.size > 0) await new Promise<void>((wake) => drainWaiters.push(wake));
      writer.flush();
      if (!socket.destroyed) {
        await new Promise<void>((done) => {
          socket.once('close', () => done());
          socket.end();
        });
      }
    },
    destroy(error) {
      closedLocally = true;
      destroy(error);
    },
  };
  return connection;
}

function cancelled(route: MethodRoute): RpcError {
  return new RpcError('Cancelled', `${route.label} was cancelled by the caller`, { neverSent: false });
}
