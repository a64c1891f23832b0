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
import { tickNow } from '../core/clock.js';
import { fromErrorPayload } from '../core/error-payload.js';
import { messageOf, RpcError } from '../core/rpc-error.js';
import { type ByteBudget, createByteBudget } from '../protocol/byte-budget.js';
import { type ConnectionOptions, DEFAULT_STREAM_OPTIONS } from '../protocol/connection-options.js';
import { EventName, type Frame, FrameFlag, FrameKind } from '../protocol/frame.js';
import { EMPTY_BODY, readEventName } from '../protocol/frame-writer.js';
import { openFramedConnection } from '../protocol/framed-connection.js';
import { readAttachments } from '../protocol/metadata.js';
import { AUTH_ATTACHMENT, credentialsOf } from '../security/authenticator.js';
import { attachmentsWithoutCredentials } from '../security/connection-credentials.js';
import { MAX_PRESENTED_TOKEN_BYTES } from '../security/presented-credentials.js';
import { deflateCompressor } from '../serialization/compression/zlib-compressors.js';
import { JSON_SERIALIZER_ID } from '../serialization/json.js';
import type { Serializer } from '../serialization/serializer.js';
import { transportAddress } from '../transport/transport.js';
import { type AnswerLimits, ForeignSerializerError, readAnswer } from './answer-reader.js';
import { createClientStreams } from './client-streams.js';
import {
  type ClientConnection,
  type ConnectionEvents,
  type ConnectionState,
  type ConnectionTarget,
  callBySending,
} from './connection.js';
import { createDeadlineWheel } from './deadline-wheel.js';
import { PendingCalls, receiveAttachments, type WireCall } from './pending-call.js';
import { pongLoad } from './pong-load.js';
import { watchSilence } from './suspicion.js';

const MAX_REQUEST_ID = 0xffffffff;

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
  const pending = new PendingCalls();
  let state: ConnectionState = { kind: 'connecting' };
  /** Why the stream is closing (set by destroy() or a stream error before `close` arrives). */
  let failure: { error: RpcError; local: boolean } | undefined;
  let nextId = 1;
  /** Whether any frame came from the provider (a close before one may be a TLS-only port). */
  let received = false;
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
      compressors: options.compressors,
      partialFrames,
      readPauseBytes: 0,
    },
    {
      onFrame(frame, at) {
        received = true;
        watch.heard(at);
        if (frame.kind === FrameKind.Response) onResponse(frame);
        else if (frame.kind >= FrameKind.StreamMessage) streams.onFrame(frame);
        else if (frame.kind === FrameKind.Event) {
          const name = readEventName(frame.meta);
          if (name === EventName.GoAway) goAway(false);
          else if (name === EventName.Reconnect) goAway(true);
          else if (name === EventName.Authenticated) credentialsTaken = true;
        }
      },
      onPong: (rttMs, meta) => {
        watch.heard(Date.now());
        events.onHeartbeatRtt?.(connection, rttMs, meta.length > 0 ? pongLoad(meta) : undefined);
      },
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
  const streams = createClientStreams({
    writer,
    options: options.streams ?? DEFAULT_STREAM_OPTIONS,
    onViolation(message) {
      events.onRefused?.(connection, `closed the connection to ${address}: ${message}`);
      destroy(new RpcError('Network', `protocol error from ${address}: ${message}`), false);
    },
    abort(id, error) {
      const call = pending.take(id);
      if (call === undefined) return;
      writer.event(EventName.Cancel, 0, EMPTY_BODY, id);
      call.failed(error);
      afterSettle();
    },
  });
  const watch = watchSilence(options.suspectAfterMs ?? 0, {
    lastReceived: () => framed.lastReceived,
    inFlight: () => pending.size,
    ping: () => framed.ping(),
    onSuspect(silentMs) {
      // Idempotent attempts go elsewhere now (each cancelled here, should the link heal); the others
      // keep waiting: they may be running there.
      const error = new RpcError(
        'Network',
        `nothing from ${address} for ${silentMs} ms while calls waited, a ping unanswered: presumed cut off`,
      );
      for (const [id, call] of pending.takeIf((waiting) => waiting.idempotent === true)) {
        writer.event(EventName.Cancel, 0, EMPTY_BODY, id);
        call.failed(error);
      }
      afterSettle();
      events.onSuspect?.(connection, silentMs);
    },
    onClear: () => events.onSuspectCleared?.(connection),
  });
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
    const call = pending.take(id);
    if (call === undefined) return;
    call.failed(new RpcError('Timeout', `${call.route.label} timed out waiting for ${address}`));
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

  const goAway = (addressStays: boolean): void => {
    if (state.kind === 'closed' || (state.kind === 'draining' && state.goneAway)) return;
    state = { kind: 'draining', goneAway: true };
    events.onGoAway?.(connection, addressStays);
    afterSettle();
  };

  /** The error of a closed connection: the reason noted, else a plain close. */
  function closedError(): RpcError {
    if (state.kind === 'closed') return state.error;
    return (
      failure?.error ??
      new RpcError(
        'Network',
        state.kind === 'open' && !received && transport.name !== 'tls'
          ? `connection to ${address} closed before the provider sent anything (if it serves TLS only, configure consumer.tls)`
          : `connection to ${address} closed`,
        { neverSent: state.kind === 'connecting' },
      )
    );
  }

  function onClose(): void {
    clearTimeout(connectTimer);
    watch.stop();
    wheel.clear();
    const error = closedError();
    const local = failure?.local ?? false;
    state = { kind: 'closed', error, local };
    for (const call of pending.takeAll()) call.failed(error);
    afterSettle();
    readyPromise = undefined;
    events.onClose?.(connection, error, local);
  }

  const onResponse = (frame: Frame): void => {
    const call = pending.take(frame.requestId);
    if (call === undefined) return; // timed out or cancelled already
    let value: unknown;
    try {
      if (frame.meta.length > 0) receiveAttachments(call.attempt, readAttachments(frame.meta, 0).attachments);
      const offered = (call.route.compressor ?? deflateCompressor).id;
      value = readAnswer(frame, call.route.serializer, jsonSerializer, answerLimits, offered);
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
    const call = pending.take(id);
    if (call === undefined) return;
    writer.event(EventName.Cancel, 0, EMPTY_BODY, id);
    call.failed(cancelled(call));
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

  /**
   * The `authorization` value whose token this connection presented last (an `authenticate` event),
   * and whether the provider took it.
   */
  let presentedValue: string | undefined;
  let credentialsTaken = false;

  /**
   * The attachments to send `call` with. Credentials the `credentials` filter added are presented once
   * for the connection (again when they change: a refreshed token) and, once the provider said it takes
   * them, left out of the call; a provider that does not know the event keeps getting them per call.
   */
  const attachmentsToSend = (attachments: WireCall['attachments']): WireCall['attachments'] => {
    if (attachments === undefined) return attachments;
    const rest = attachmentsWithoutCredentials(attachments);
    if (rest === undefined) return attachments;
    const value = attachments[AUTH_ATTACHMENT];
    if (value !== presentedValue) {
      const token = credentialsOf(value);
      const bytes = token === undefined ? undefined : Buffer.from(token, 'utf8');
      if (bytes === undefined || bytes.length > MAX_PRESENTED_TOKEN_BYTES) return attachments;
      writer.event(EventName.Authenticate, 0, bytes);
      presentedValue = value;
    }
    return credentialsTaken ? rest : attachments;
  };

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
    // byte 7: the compressor of this body and of the answer this call takes (bit 3)
    const compressor = route.compressor ?? deflateCompressor;
    const compressed = framed.compress(body, compressor);
    if (compressed !== undefined) {
      body = compressed;
      flags |= FrameFlag.Compressed;
    }
    const id = allocateId();
    const timeoutMs = call.attempt.timeoutMs;
    lastCallAt = tickNow();
    if (call.oneway) {
      writer.request({
        requestId: id,
        flags: flags | FrameFlag.OneWay,
        serializer: route.serializer.id,
        compressor: compressor.id,
        routePrefix: route.prefix,
        timeoutMs,
        attachments: attachmentsToSend(call.attachments),
        callId: call.callId,
        body,
      });
      call.attempt.sent = true;
      call.answered(undefined);
      return;
    }
    let tracked = call;
    if (call.stream !== undefined) {
      const opened = streams.open(id, call, call.stream);
      if (opened instanceof RpcError) {
        call.failed(opened);
        return;
      }
      tracked = opened;
      flags |= FrameFlag.Stream;
    }
    pending.add(id, tracked, signal === undefined ? undefined : () => cancel(id));
    if (timeoutMs > 0) wheel.add(id, lastCallAt + timeoutMs);
    writer.request({
      requestId: id,
      flags,
      serializer: route.serializer.id,
      compressor: compressor.id,
      routePrefix: route.prefix,
      timeoutMs,
      attachments: attachmentsToSend(call.attachments),
      callId: call.callId,
      body,
    });
    call.attempt.sent = true;
    if (tracked !== call) streams.started(id);
    watch.busy(lastCallAt);
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
    get openStreams() {
      return streams.size;
    },
    get suspected() {
      return watch.suspected;
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
    call: (route, args, options) => callBySending(send, route, args, options),
    ping: framed.ping,
    async close() {
      if (state.kind === 'closed') return;
      if (state.kind !== 'draining') state = { kind: 'draining', goneAway: false };
      if (pending.size > 0) await new Promise<void>((wake) => drainWaiters.push(wake));
      if (!stream.destroyed) {
        // noted only now: a peer that goes away while the calls drain is what ends them, not this side
        fail(new RpcError('Network', `connection to ${address} closed by this side`), true);
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
