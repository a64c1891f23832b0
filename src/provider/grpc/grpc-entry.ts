/**
 * The provider's gRPC entry (docs/grpc.md): gRPC over HTTP/2 — h2c, and h2 over TLS by ALPN with the
 * app's `server.tls` — on the provider's own port (connections told apart by their preface or ALPN,
 * preface.ts) or on a port of its own (`server.grpc.port`). Each request is one more adapter into the
 * provider entry (provider/entry.ts): the same service table, filter chain (auth, access rules, limits,
 * metrics, tracing, access log, shutdown), limits and error shaping as calls over Callisto's protocol.
 *
 * Why node:http2 and no library: it is built in (nghttp2, the HTTP/2 implementation curl and Apache
 * use), it carries the protocol's own protections — SETTINGS, PING and RST_STREAM floods (nghttp2's
 * rate limits, CVE-2023-44487 included), HPACK bombs (`maxHeaderListSize`, `maxSessionMemory`) — and
 * gRPC's framing above it is small (protocol/grpc/); grpc-js' server would bring its own service
 * model, limits and error shaping beside Callisto's, which is what the one entry exists to avoid.
 *
 * Limits per connection are HTTP/2 SETTINGS (`maxConcurrentStreams`, `maxHeaderListBytes`), memory
 * per connection `maxSessionMemoryMb`, per message `maxMessageBytes` (from the prefix); connections
 * count against `server.maxConnections` and per address like any other. Whatever a client does wrong
 * at the HTTP/2 level closes its connection with a log line naming it; others are served on.
 *
 * Graceful shutdown: `goAway()` sends GOAWAY (no new streams; those open finish) and turns the health
 * service NOT_SERVING; `close(graceMs)` waits for open streams, then closes what is left.
 */
import http2 from 'node:http2';
import type net from 'node:net';
import type { ErrorExposure } from '../../core/error-payload.js';
import { RpcError } from '../../core/rpc-error.js';
import type { Logger } from '../../observability/logger.js';
import type { PeerCertificate } from '../../security/peer-certificate.js';
import { createProtobufSerializer } from '../../serialization/protobuf.js';
import type { Serializer } from '../../serialization/serializer.js';
import type { ByteStream, Transport, TransportListener } from '../../transport/transport.js';
import { createArgumentsReader } from '../arguments-reader.js';
import { createProviderEntry, type ScrubbedError } from '../entry.js';
import type { PeerSlot } from '../peer-limits.js';
import type { ServerInvocation } from '../server-invocation.js';
import type { ServiceTable } from '../service-table.js';
import type { Serving } from '../serving.js';
import { type GrpcBuiltin, type GrpcCallState, type GrpcPeer, serveGrpcCall } from './grpc-call.js';
import { createGrpcCors } from './grpc-cors.js';
import { grpcEndOf } from './grpc-errors.js';
import { GRPC_OK } from './grpc-exchange.js';
import { createGrpcHealth, type GrpcHealth } from './grpc-health.js';
import type { GrpcOptions } from './grpc-options.js';
import { createGrpcReflection } from './grpc-reflection.js';
import { createGrpcRoutes } from './grpc-routes.js';

export interface GrpcEntryParts {
  readonly table: ServiceTable;
  readonly serving: Serving;
  /** The app's json serializer (`application/grpc+json`). */
  readonly json: Serializer;
  readonly options: GrpcOptions;
  readonly decodeLimits: { readonly maxElements: number };
  readonly exposeStack: boolean;
  readonly exposeErrors: ErrorExposure;
  /** A connection or request refused for what it does (logged, rate-limited, naming the peer). */
  onRefused(remote: string, reason: string): void;
  /** A connection closed for breaking HTTP/2 (floods, bad frames), naming the peer. */
  onProtocolError(remote: string, reason: string): void;
  onScrubbed(scrubbed: ScrubbedError): void;
  readonly logger?: Logger | undefined;
}

export interface GrpcEntry {
  /** Serves a connection that speaks HTTP/2 (from the provider's own port, or the entry's own). */
  serve(socket: net.Socket, slot: PeerSlot): void;
  /** Listens on a port of its own with `transport` (TLS with the app's certificates when it is `tls`). */
  listen(transport: Transport): Promise<void>;
  /** The entry's own port, once listening on one; undefined on the provider's port. */
  readonly port: number | undefined;
  /** Connections open now. */
  readonly connectionCount: number;
  readonly health: GrpcHealth;
  /** GOAWAY to every connection (and to those arriving from now on); health NOT_SERVING. */
  goAway(): void;
  /** Stops listening; waits for open streams up to `graceMs`, then closes every connection. */
  close(graceMs?: number): Promise<void>;
  destroy(): void;
}

/** A stream error is the stream's: the session's own error is logged, the stream is closed by node. */
function ignoreStreamError(): void {}

/** The invocation whose stream the entry watches for the client going away. */
const WATCHED = Symbol('callisto.grpcWatched');
type WatchedStream = http2.ServerHttp2Stream & { [WATCHED]?: ServerInvocation };

function callerWentAway(invocation: ServerInvocation): void {
  const state = invocation.origin as GrpcCallState;
  if (state.timer !== undefined) clearTimeout(state.timer);
  state.timer = undefined;
  if (invocation.answered) return;
  invocation.answered = true;
  const gone = new RpcError('Cancelled', `the gRPC caller (${invocation.remoteAddress}) cancelled the call`);
  invocation.abort(gone);
  state.port?.stop(gone);
}

/** One listener for every watched stream. */
function onWatchedClose(this: WatchedStream): void {
  const invocation = this[WATCHED];
  if (invocation !== undefined) callerWentAway(invocation);
}

/** The ALPN protocol a TLS listener offers for the entry. */
export const GRPC_ALPN = 'h2';

export function createGrpcEntry(parts: GrpcEntryParts): GrpcEntry {
  const { options, serving } = parts;
  const routes = createGrpcRoutes(parts.table);
  const health = createGrpcHealth(routes);
  const sessions = new Map<http2.ServerHttp2Session, GrpcPeer>();
  /** The peer of the connection being handed to the HTTP/2 server ('session' is emitted synchronously). */
  let arriving: GrpcPeer | undefined;
  /** Streams each connection's client reset in the current one-second window. */
  const resets = new WeakMap<http2.ServerHttp2Session, { windowStart: number; count: number }>();
  /** The client reset a stream: past `maxResetsPerSecond` in a second, its connection is closed. */
  const countReset = (session: http2.ServerHttp2Session, peer: GrpcPeer): void => {
    const window = resets.get(session);
    if (window === undefined) return;
    const now = Date.now();
    if (now - window.windowStart >= 1_000) {
      window.windowStart = now;
      window.count = 0;
    }
    window.count++;
    if (window.count <= options.maxResetsPerSecond || session.destroyed) return;
    parts.onProtocolError(
      peer.remote,
      `gRPC connection reset more than ${options.maxResetsPerSecond} streams in a second (rapid reset; server.grpc.maxResetsPerSecond)`,
    );
    session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    session.destroy();
  };
  /** One listener for every stream: a stream the client reset counts against its connection. */
  function onAborted(this: http2.ServerHttp2Stream): void {
    const session = this.session as unknown as http2.ServerHttp2Session | undefined;
    const peer = session === undefined ? undefined : sessions.get(session);
    if (peer !== undefined) countReset(session!, peer);
  }
  let goingAway = false;
  let listener: TransportListener | undefined;

  const server = http2.createServer({
    settings: {
      maxConcurrentStreams: options.maxConcurrentStreams,
      maxHeaderListSize: options.maxHeaderListBytes,
      enablePush: false,
    },
    maxSessionMemory: options.maxSessionMemoryMb,
    maxHeaderListPairs: 256,
    // a client that opens and resets streams, or sends frames nghttp2 rejects, is closed
    maxSessionInvalidFrames: 100,
    maxSessionRejectedStreams: 100,
    maxOutstandingPings: 10,
    maxSettings: 32,
    unknownProtocolTimeout: 5_000,
  });

  const reader = createArgumentsReader(
    { decode: parts.decodeLimits, inflate: { enabled: false, maxBytes: 0, maxRatio: 1 } },
    () => {},
  );

  const builtins = new Map<string, GrpcBuiltin>();
  if (options.health) for (const [path, builtin] of health.methods) builtins.set(path, builtin);
  if (options.reflection) {
    for (const [path, builtin] of createGrpcReflection(routes, options.health).methods)
      builtins.set(path, builtin);
  }

  const stateOf = (invocation: ServerInvocation): GrpcCallState => invocation.origin as GrpcCallState;

  /** `grpc-timeout` passed: the handler is stopped and DEADLINE_EXCEEDED sent (setTimeout's argument). */
  const deadlinePassed = (invocation: ServerInvocation): void => {
    const state = stateOf(invocation);
    state.timer = undefined;
    if (invocation.answered) return;
    invocation.answered = true;
    const error = new RpcError('Timeout', `${invocation.label}: the caller's deadline passed`);
    invocation.abort(error);
    state.port?.stop(error);
    state.exchange.end(grpcEndOf(entry.shape(error)));
  };

  /**
   * The client went away (cancel, its deadline, its connection): the handler's signal says so. Watched
   * for stream calls from their start, for unary calls once their signal is read (nobody else would
   * know: what is written after is dropped by the exchange).
   */
  const watchClose = (invocation: ServerInvocation): void => {
    const stream = stateOf(invocation).exchange.stream as WatchedStream;
    if (stream[WATCHED] !== undefined) return;
    stream[WATCHED] = invocation;
    if (stream.closed || stream.destroyed) callerWentAway(invocation);
    else stream.on('close', onWatchedClose);
  };

  const entry = createProviderEntry(
    { exposeStack: parts.exposeStack, exposeErrors: parts.exposeErrors, onScrubbed: parts.onScrubbed },
    {
      began(invocation) {
        const state = stateOf(invocation);
        if (state.port !== undefined) watchClose(invocation);
        if (invocation.deadline > 0) {
          state.timer = setTimeout(deadlinePassed, Math.max(0, invocation.deadline - Date.now()), invocation);
          state.timer.unref();
        }
      },
      ended(invocation) {
        serving.ended();
        const state = stateOf(invocation);
        // a unary call answers now; a stream's messages still go out under its deadline
        if (state.port === undefined && state.timer !== undefined) {
          clearTimeout(state.timer);
          state.timer = undefined;
        }
      },
      answer(invocation, value) {
        const { exchange, port, messages } = stateOf(invocation);
        const attachments = invocation.answerAttachments;
        const ok = attachments === undefined ? GRPC_OK : { status: 0, attachments };
        if (port !== undefined && port.kind !== 'client') {
          exchange.end(ok);
          return;
        }
        let payload: Uint8Array;
        try {
          payload = messages.encodeOutput(value);
        } catch (error) {
          const failure = new RpcError(
            'Internal',
            `cannot encode the result of ${invocation.label}: ${(error as Error).message}`,
          );
          exchange.end({
            ...grpcEndOf(entry.shape(failure, { label: invocation.label, remote: invocation.remoteAddress })),
            attachments,
          });
          return;
        }
        if (payload.length > options.maxMessageBytes) {
          const failure = new RpcError(
            'RateLimited',
            `the result of ${invocation.label} is ${payload.length} bytes, over server.grpc.maxMessageBytes (${options.maxMessageBytes})`,
          );
          exchange.end({ ...grpcEndOf(entry.shape(failure)), attachments });
          return;
        }
        exchange.send(payload);
        exchange.end(ok);
      },
      fail(invocation, error) {
        stateOf(invocation).exchange.end({ ...grpcEndOf(error), attachments: invocation.answerAttachments });
      },
    },
  );

  const ctx = {
    options,
    routes,
    entry,
    json: parts.json,
    protobuf: createProtobufSerializer(),
    decodeLimits: parts.decodeLimits,
    reader,
    builtins,
    cors: createGrpcCors(options.corsOrigins),
    onRefused: parts.onRefused,
    onSignal: watchClose,
  };

  server.on('session', (session: http2.ServerHttp2Session) => {
    const peer = arriving;
    arriving = undefined;
    if (peer === undefined) {
      // only connections handed over by serve() have sessions
      session.socket.destroy();
      return;
    }
    sessions.set(session, peer);
    session.setTimeout(options.idleTimeoutMs, () => {
      // no frame for idleTimeoutMs: a connection with nothing open goes away
      if (!session.closed) session.close();
    });
    session.on('error', (error) => parts.onProtocolError(peer.remote, `gRPC connection: ${error.message}`));
    session.on('frameError', (type, code) =>
      parts.onProtocolError(peer.remote, `gRPC connection: frame of type ${type} refused (error ${code})`),
    );
    session.on('goaway', (code) => {
      if (code !== http2.constants.NGHTTP2_NO_ERROR) {
        parts.onProtocolError(peer.remote, `gRPC connection closed with GOAWAY error ${code}`);
      }
    });
    session.once('close', () => sessions.delete(session));
    resets.set(session, { windowStart: 0, count: 0 });
    if (goingAway) session.goaway(http2.constants.NGHTTP2_NO_ERROR);
  });
  server.on('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
    const peer = sessions.get(stream.session as unknown as http2.ServerHttp2Session);
    if (peer === undefined) {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    stream.on('error', ignoreStreamError);
    stream.on('aborted', onAborted);
    serveGrpcCall(ctx, peer, stream, headers);
  });
  // nghttp2 tells the session about a flood (ENHANCE_YOUR_CALM) as an error; a stream error is per stream
  server.on('sessionError', () => {});

  const serve = (socket: net.Socket, slot: PeerSlot): void => {
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.once('close', () => slot.disconnect());
    const peerCertificate = (socket as ByteStream).peerCertificate as PeerCertificate | undefined;
    arriving = { remote, slot, peerCertificate };
    try {
      server.emit('connection', socket);
    } finally {
      arriving = undefined;
    }
  };

  return {
    serve,
    async listen(transport) {
      listener = await transport.listen(
        {
          host: options.host,
          port: options.port,
          alpnProtocols: [GRPC_ALPN],
          admit: (from) => {
            const slot = serving.limits.connect(from.address);
            if (typeof slot !== 'string') return slot;
            parts.onRefused(`${from.address}:${from.port}`, `gRPC connection refused: ${slot}`);
            return undefined;
          },
        },
        (stream, admitted) => {
          const socket = stream as unknown as net.Socket;
          let slot = admitted as PeerSlot | undefined;
          if (slot === undefined) {
            const taken = serving.limits.connect(socket.remoteAddress ?? '');
            if (typeof taken === 'string') {
              parts.onRefused(
                `${socket.remoteAddress}:${socket.remotePort}`,
                `gRPC connection refused: ${taken}`,
              );
              socket.destroy();
              return;
            }
            slot = taken;
          }
          serve(socket, slot);
        },
      );
    },
    get port() {
      return listener?.port;
    },
    get connectionCount() {
      return sessions.size;
    },
    health,
    goAway() {
      goingAway = true;
      health.shutDown();
      for (const session of sessions.keys()) {
        if (!session.closed && !session.destroyed) session.goaway(http2.constants.NGHTTP2_NO_ERROR);
      }
    },
    async close(graceMs = 1_000) {
      goingAway = true;
      health.shutDown();
      const stopped = listener?.close();
      // the calls in flight were drained before this step; a health Watch would wait forever
      health.endWatches();
      await Promise.all(
        [...sessions.keys()].map(
          (session) =>
            new Promise<void>((resolve) => {
              if (session.destroyed) {
                resolve();
                return;
              }
              const timer = setTimeout(() => session.destroy(), graceMs);
              timer.unref();
              // not close(callback): a session the client already closed (its GOAWAY) ignores it
              session.once('close', () => {
                clearTimeout(timer);
                resolve();
              });
              session.close();
            }),
        ),
      );
      await stopped;
    },
    destroy() {
      goingAway = true;
      health.shutDown();
      void listener?.close();
      health.endWatches();
      for (const session of sessions.keys()) session.destroy();
    },
  };
}
