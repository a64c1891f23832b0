/**
 * A connection to a gRPC server (any: grpc-js, grpc-go, grpc-java, Python's grpcio, a Callisto gRPC
 * entry), for references with `protocol: 'grpc'` (docs/grpc-consumer.md): the same `ClientConnection` the
 * pool holds for the framed protocol, behind the same endpoint, so balancing, cluster strategies,
 * retries, deadlines, outlier ejection, limits and metrics above it are unchanged. One HTTP/2 session
 * per provider address (`grpc://` h2c, `grpcs://` TLS with ALPN h2, verified with `consumer.tls`), every
 * call one stream on it (grpc-call.ts), multiplexed.
 *
 * Why node:http2 and not a gRPC library: what a gRPC client needs of HTTP/2 is a session, streams,
 * trailers and RST_STREAM codes, which node:http2 gives as they are; a library (`@grpc/grpc-js`) would
 * bring its own channel, name resolution, balancing, retries, deadlines and connection backoff — the very
 * things Callisto's cluster does — and hide what failover needs to see (whether a stream was refused
 * before the server's application saw it).
 *
 * Lifecycle, as the pool expects it: `connecting` until the session's handshake is done (a failure, or
 * `connectTimeoutMs` passing, closes it: the pool backs off and reconnects as for TCP); `open`;
 * `draining` once the server sent GOAWAY (new calls go on a new connection, `addressStays`: a gRPC
 * server sends GOAWAY at its maximum connection age too) or `close()` was called; `closed`. A session
 * silent while calls wait is suspected as a framed one is (consumer/suspicion.ts; HTTP/2 PING).
 *
 * `neverSent` is true only when it is provable, which is what lets failover retry a non-idempotent
 * call: the stream was refused (RST_STREAM REFUSED_STREAM), its id is above the last one a GOAWAY let
 * through, or the session never opened (or closed before the stream was given an id).
 */

import type { SecureClientSessionOptions } from 'node:http2';
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { messageOf, RpcError } from '../core/rpc-error.js';
import type { Serializer } from '../serialization/serializer.js';
import { type ClientTlsOptions, clientContextOptions } from '../transport/tls-options.js';
import {
  type ClientConnection,
  type ConnectionEvents,
  type ConnectionState,
  callBySending,
} from './connection.js';
import { type GrpcFlight, startGrpcCall } from './grpc-call.js';
import { grpcCodecOf } from './grpc-codec.js';
import type { WireCall } from './pending-call.js';
import { watchSilence } from './suspicion.js';

/** The pseudo-transports of gRPC endpoints (their addresses read `grpc://host:port`, `grpcs://host:port`). */
export const GRPC_TRANSPORTS = ['grpc', 'grpcs'] as const;

export function isGrpcTransport(name: string): name is (typeof GRPC_TRANSPORTS)[number] {
  return name === 'grpc' || name === 'grpcs';
}

export interface GrpcConnectionInit {
  readonly host: string;
  readonly port: number;
  /** TLS (`grpcs`), verified with the consumer's TLS options. */
  readonly secure: boolean;
  /** `consumer.tls`, resolved; required for `secure`. */
  readonly tls: ClientTlsOptions | undefined;
  /** The app's `json` serializer: the bodies of services without protobuf messages. */
  readonly json: Serializer;
  /** Largest message of a unary call accepted or sent, bytes (`server.maxFrameBytes`). */
  readonly maxMessageBytes: number;
  /** Largest message of a stream (`maxStreamMessageBytes`). */
  readonly maxStreamMessageBytes: number;
  readonly maxDecodedElements: number;
  /** Bytes of unread messages a stream may hold before it stops reading (the stream window). */
  readonly streamAheadBytes: number;
  /** Streams open at once on this connection, at most (`maxStreamsPerConnection`). */
  readonly maxStreams: number;
  readonly connectTimeoutMs: number;
  /** A session silent this long while calls wait is suspected; 0 never. */
  readonly suspectAfterMs: number;
  readonly events?: ConnectionEvents | undefined;
}

export function createGrpcConnection(init: GrpcConnectionInit): ClientConnection {
  const { host, port, secure, events = {} } = init;
  const address = `${secure ? 'grpcs' : 'grpc'}://${host}:${port}`;
  const flights = new Set<GrpcFlight>();
  let state: ConnectionState = { kind: 'connecting' };
  let everOpened = false;
  /** The last stream id a GOAWAY let through (streams above it were never processed). */
  let goAwayLastId = Number.POSITIVE_INFINITY;
  let lastCallAt = Date.now();
  let lastActivity = 0;
  let openStreams = 0;
  const drainWaiters: Array<() => void> = [];
  let resolveReady: () => void = () => {};
  let rejectReady: (error: RpcError) => void = () => {};
  const readyPromise = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  readyPromise.catch(() => {});

  const noTls = secure && init.tls === undefined;
  const noTlsError = (): RpcError =>
    new RpcError(
      'Network',
      `provider ${address} serves gRPC over TLS and this consumer has no TLS configuration: set consumer.tls.ca (the CA that signed the server's certificate; file or PEM), or consumer.tls.enabled: true to trust the system's CAs`,
      { neverSent: true },
    );

  const sessionOptions: SecureClientSessionOptions = secure
    ? {
        ...(init.tls ? clientContextOptions(init.tls) : {}),
        rejectUnauthorized: init.tls?.rejectUnauthorized ?? true,
        ...(init.tls?.servername ? { servername: init.tls.servername } : {}),
        ALPNProtocols: ['h2'],
      }
    : {};
  let session: ClientHttp2Session | undefined;
  let connectTimer: NodeJS.Timeout | undefined;

  const unsent = (stream: ClientHttp2Stream | undefined): boolean => {
    if (!everOpened || stream === undefined || stream.id === undefined) return true;
    if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return true;
    return stream.id > goAwayLastId;
  };

  const heard = (): void => {
    lastActivity = Date.now();
    watch.heard(lastActivity);
  };

  const watch = watchSilence(init.suspectAfterMs, {
    lastReceived: () => lastActivity,
    inFlight: () => flights.size,
    ping: () => {
      session?.ping((error) => {
        if (error === null) heard();
      });
    },
    onSuspect: (silentMs) => {
      events.onSuspect?.(connection, silentMs);
      // its idempotent unary calls are retried elsewhere; the others may be running: they wait
      for (const flight of [...flights]) {
        if (flight.call.idempotent === true && flight.call.stream === undefined) {
          flight.cancel(
            new RpcError('Network', `${address} has been silent for ${silentMs} ms while calls waited`),
          );
        }
      }
    },
    onClear: () => events.onSuspectCleared?.(connection),
  });

  /** The session is gone (or never came): its calls fail, the pool is told. */
  const closed = (error: RpcError, local: boolean): void => {
    if (connectTimer !== undefined) clearTimeout(connectTimer);
    watch.stop();
    const wasClosed = state.kind === 'closed';
    state = { kind: 'closed', error, local };
    rejectReady(error);
    for (const flight of [...flights]) flight.cancel(error);
    for (const wake of drainWaiters.splice(0)) wake();
    if (!wasClosed) events.onClose?.(connection, error, local);
  };

  const ended = (flight: GrpcFlight): void => {
    flights.delete(flight);
    if (flight.call.stream !== undefined) openStreams--;
    if (flights.size > 0) return;
    lastCallAt = Date.now();
    for (const wake of drainWaiters.splice(0)) wake();
  };

  const open = (): ClientHttp2Session => {
    const opened = http2.connect(`${secure ? 'https' : 'http'}://${host}:${port}`, {
      ...sessionOptions,
      settings: { enablePush: false },
    });
    connectTimer = setTimeout(() => {
      const error = new RpcError(
        'Network',
        `connect to ${address} timed out after ${init.connectTimeoutMs} ms`,
        {
          neverSent: true,
        },
      );
      closed(error, false);
      opened.destroy();
    }, init.connectTimeoutMs);
    connectTimer.unref();
    let sessionError: Error | undefined;
    opened.once('connect', () => {
      clearTimeout(connectTimer);
      everOpened = true;
      heard();
      if (state.kind !== 'connecting') return;
      state = { kind: 'open' };
      resolveReady();
    });
    opened.on('goaway', (_code: number, lastStreamId: number) => {
      goAwayLastId = Math.min(goAwayLastId, lastStreamId);
      for (const flight of [...flights]) flight.goneAway(goAwayLastId);
      if (state.kind === 'open' || state.kind === 'connecting') {
        state = { kind: 'draining', goneAway: true };
        events.onGoAway?.(connection, true);
      }
    });
    opened.on('error', (error) => {
      sessionError ??= error;
    });
    opened.once('close', () => {
      if (state.kind === 'closed') return;
      const cause = sessionError;
      const error = !everOpened
        ? new RpcError(
            'Network',
            `cannot connect to ${address}${cause === undefined ? '' : `: ${messageOf(cause)}`}`,
            { cause, neverSent: true },
          )
        : new RpcError(
            'Network',
            `the connection to ${address} closed${cause === undefined ? '' : `: ${messageOf(cause)}`}`,
            { cause },
          );
      closed(error, false);
    });
    return opened;
  };

  /** Why `call` cannot be sent now, or undefined. */
  const refusal = (call: WireCall): RpcError | undefined => {
    if (state.kind === 'closed') return state.error;
    if (state.kind === 'draining') {
      return new RpcError('Shutdown', `${address} is going away`, { neverSent: true });
    }
    if (noTls) return noTlsError();
    if (call.signal?.aborted) {
      return new RpcError('Cancelled', `${call.route.label} was cancelled by the caller`, {
        neverSent: true,
        cause: call.signal.reason,
      });
    }
    if (call.stream !== undefined && openStreams >= init.maxStreams) {
      return new RpcError(
        'Overloaded',
        `this connection has ${openStreams} streams open, its limit (maxStreamsPerConnection ${init.maxStreams})`,
        { neverSent: true },
      );
    }
    if (call.oneway) {
      return new RpcError('BadRequest', `${call.route.label} is one-way: gRPC has no one-way calls`, {
        neverSent: true,
      });
    }
    return undefined;
  };

  const send = (call: WireCall): void => {
    const refused = refusal(call);
    if (refused !== undefined) {
      call.failed(refused);
      return;
    }
    if (session === undefined) {
      call.failed(new RpcError('Network', `no connection to ${address}`, { neverSent: true }));
      return;
    }
    lastCallAt = Date.now();
    if (call.stream !== undefined) openStreams++;
    let registered = false;
    let endedAtStart = false;
    const flight = startGrpcCall({
      call,
      session,
      codec: grpcCodecOf(call.route, init.json),
      address,
      maxMessageBytes: call.stream === undefined ? init.maxMessageBytes : init.maxStreamMessageBytes,
      maxDecodedElements: init.maxDecodedElements,
      aheadBytes: init.streamAheadBytes,
      unsent,
      heard,
      refused: (reason) => events.onRefused?.(connection, reason),
      ended: (ending) => {
        if (registered) {
          ended(ending);
          return;
        }
        // ended before it started (its arguments refused, a stream that cannot be opened)
        endedAtStart = true;
        if (ending.call.stream !== undefined) openStreams--;
      },
    });
    if (endedAtStart) return;
    registered = true;
    flights.add(flight);
    watch.busy(lastCallAt);
  };

  const destroy = (error?: RpcError): void => {
    const reason = error ?? new RpcError('Network', `connection to ${address} closed by this side`);
    const wasClosed = state.kind === 'closed';
    if (!wasClosed) closed(reason, true);
    session?.destroy();
  };

  const connection: ClientConnection = {
    address,
    get state() {
      return state;
    },
    get inFlight() {
      return flights.size;
    },
    get openStreams() {
      return openStreams;
    },
    get suspected() {
      return watch.suspected;
    },
    get lastActivity() {
      return lastActivity;
    },
    get lastCallAt() {
      return lastCallAt;
    },
    heartbeatRttMs: 0,
    ready() {
      if (state.kind === 'open' || state.kind === 'draining') return Promise.resolve();
      if (state.kind === 'closed') return Promise.reject(state.error);
      return readyPromise;
    },
    send,
    call: (route, args, options) => callBySending(send, route, args, options),
    ping() {
      session?.ping((error) => {
        if (error === null) heard();
      });
    },
    async close() {
      if (state.kind === 'closed') return;
      state = { kind: 'draining', goneAway: state.kind === 'draining' && state.goneAway };
      if (flights.size > 0) await new Promise<void>((wake) => drainWaiters.push(wake));
      const current = session;
      if (current !== undefined && !current.destroyed) {
        await new Promise<void>((done) => {
          current.once('close', () => done());
          current.close();
        });
      }
      if ((state as ConnectionState).kind !== 'closed') {
        closed(new RpcError('Network', `connection to ${address} closed by this side`), true);
      }
    },
    destroy,
  };

  if (noTls) {
    setImmediate(() => closed(noTlsError(), false));
  } else {
    try {
      session = open();
    } catch (error) {
      const failure = new RpcError('Network', `cannot connect to ${address}: ${messageOf(error)}`, {
        cause: error,
        neverSent: true,
      });
      setImmediate(() => closed(failure, false));
    }
  }
  return connection;
}
