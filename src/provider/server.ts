/**
 * The provider's server, on a transport (TCP unless configured otherwise): accepts connections (within
 * `maxConnections` in all and `maxConnectionsPerAddress` per remote address, counted from the moment
 * they arrive — a TLS connection from before its handshake; one over is closed as it arrives) and
 * serves them from a service table. Shutdown is in steps the app drives: `refuse()` (new calls get Shutdown errors), `goAway()` (tell consumers, also
 * those connecting from now on), `drain(timeoutMs)` (wait for calls in flight), `close()` (close every
 * connection once its consumer has closed its side, or after a grace period). `destroy()` is immediate.
 */

import type net from 'node:net';
import { RpcError } from '../core/rpc-error.js';
import { createByteBudget } from '../protocol/byte-budget.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ByteStream, Transport, TransportListener } from '../transport/transport.js';
import type { ScrubbedError } from './entry.js';
import { type PrefaceSniff, routeByPreface } from './grpc/preface.js';
import type { LoadReports } from './load-reports.js';
import type { PeerSlot } from './peer-limits.js';
import { type ServerConnection, serveConnection } from './server-connection.js';
import type { ServerContext } from './server-context.js';
import type { ServerOptions } from './server-options.js';
import type { ServiceTable } from './service-table.js';
import type { Serving } from './serving.js';

/** A connection that sent nothing is Callisto's after at most this (half a heartbeat interval, when shorter). */
const SNIFF_SILENCE_MAX_MS = 1_000;

export interface RpcServer {
  /** The port listened on (the real one when configured as 0). */
  readonly port: number;
  readonly host: string;
  /** Calls executing now. */
  readonly active: number;
  readonly connectionCount: number;
  /** Streams open on every connection. */
  readonly openStreams: number;
  listen(): Promise<void>;
  /** From now on, new calls are answered with a Shutdown error. */
  refuse(): void;
  /** Sends every connected consumer a "going away" event. */
  goAway(reconnect?: boolean): void;
  /** Resolves when no call is executing, or after `timeoutMs`; resolves true when drained. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Answers every call still executing with a Shutdown error. */
  abandonInFlight(): void;
  /**
   * Stops listening and closes every connection gracefully: consumers are told "going away" (if not
   * yet), get every answer, and close their side; one that has not within 1 s is cut off. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
  /** Stops listening and destroys every connection at once. */
  destroy(): void;
}

export interface RpcServerHooks {
  /** A connection was closed for breaking the protocol, for being too slow, or for a spent budget. */
  onProtocolError?(remote: string, error: unknown): void;
  /** A connection was refused as it arrived (connection caps), or a request for what it carries. */
  onRefused?(remote: string, reason: string): void;
  /** A handler's system error was not shown to the caller; it is reported here under `ref`. */
  onScrubbed?(scrubbed: ScrubbedError): void;
}

/**
 * The serializers a provider accepts: the ones named in `options.serializers`, else every registered
 * one except those for trusted peers only (v8).
 */
export function acceptedSerializers(
  serializers: readonly Serializer[],
  names: readonly string[] | undefined,
): Serializer[] {
  return serializers.filter((serializer) =>
    names ? names.includes(serializer.name) : serializer.trustedPeersOnly !== true,
  );
}

/** What a server is built from. */
export interface RpcServerParts {
  readonly transport: Transport;
  readonly table: ServiceTable;
  /** Every registered serializer (those accepted are picked by `options.serializers`). */
  readonly serializers: readonly Serializer[];
  readonly options: ServerOptions;
  /** The provider's limits and shutdown state, shared with its in-process calls. */
  readonly serving: Serving;
  readonly hooks?: RpcServerHooks;
  /**
   * The gRPC entry on this port (provider/grpc/): connections that open with the HTTP/2 preface, or
   * negotiate one of `alpnProtocols` over TLS, are handed to it (grpc/preface.ts); every other one is
   * Callisto's, decided from its first byte.
   */
  readonly http2?: Http2Handoff | undefined;
  /** The provider's load reports, attached to answers and pongs (load-reports.ts); none: off. */
  readonly loadReports?: LoadReports | undefined;
}

/** Where connections that speak HTTP/2 go. */
export interface Http2Handoff {
  readonly alpnProtocols: readonly string[];
  serve(socket: net.Socket, slot: PeerSlot): void;
}

export function createRpcServer(parts: RpcServerParts): RpcServer {
  const { transport, table, serializers, options, serving } = parts;
  const hooks = parts.hooks ?? {};
  const accepted: (Serializer | undefined)[] = new Array(256).fill(undefined);
  for (const serializer of acceptedSerializers(serializers, options.serializers)) {
    accepted[serializer.id] = serializer;
  }
  const fallbackSerializer = serializers.find((s) => s.name === 'json') ?? serializers[0]!;
  const connections = new Set<ServerConnection>();
  const limits = serving.limits;
  const perConnection = options.connection;
  const ctx: ServerContext = {
    table,
    options,
    serializers: accepted,
    fallbackSerializer,
    limits,
    partialFrames: createByteBudget(perConnection.maxPartialFrameBytes),
    decodeLimits: { maxElements: perConnection.maxDecodedElements },
    streams: { open: 0 },
    loadReports: parts.loadReports,
    onCallEnded: serving.ended,
    onProtocolError(remote, error) {
      hooks.onProtocolError?.(remote, error);
    },
    onRefused(remote, reason) {
      hooks.onRefused?.(remote, reason);
    },
    onScrubbed(scrubbed) {
      hooks.onScrubbed?.(scrubbed);
    },
  };
  let goingAway = false;
  /** Going away as a retiring cluster worker: consumers reconnect to the same address. */
  let reconnect = false;
  /**
   * A connection's place under the caps, taken as it arrives: by the transport before its handshake
   * (tls), so that connections still shaking hands count too; else here, when it is handed over.
   */
  const admit = (from: { address: string; port: number }): PeerSlot | undefined => {
    const slot = limits.connect(from.address);
    if (typeof slot !== 'string') return slot;
    hooks.onRefused?.(`${from.address}:${from.port}`, `connection refused: ${slot}`);
    return undefined;
  };
  const accept = (socket: ByteStream, admitted?: PeerSlot): void => {
    const slot = admitted ?? admit({ address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 });
    if (slot === undefined) {
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    const http2 = parts.http2;
    if (http2 === undefined) {
      serveCallisto(socket, slot);
      return;
    }
    // until it is told apart, the connection holds its slot here
    let routed = false;
    socket.once('close', () => {
      sniffing.delete(socket);
      if (!routed) slot.disconnect();
    });
    const sniff = routeByPreface(
      socket,
      {
        http2(raw) {
          routed = true;
          sniffing.delete(socket);
          http2.serve(raw, slot);
        },
        callisto() {
          routed = true;
          sniffing.delete(socket);
          serveCallisto(socket, slot);
        },
        stalled() {
          hooks.onProtocolError?.(
            `${socket.remoteAddress}:${socket.remotePort}`,
            new Error(`an HTTP/2 preface that did not complete within ${perConnection.frameTimeoutMs} ms`),
          );
        },
      },
      {
        prefaceTimeoutMs: perConnection.frameTimeoutMs,
        // quiet Callisto consumers wait at most this before their heartbeats and timeouts start
        silenceMs: Math.min(SNIFF_SILENCE_MAX_MS, perConnection.heartbeat.intervalMs / 2),
      },
    );
    if (!routed) sniffing.set(socket, sniff);
  };
  /** Connections not yet told apart (Callisto or HTTP/2). */
  const sniffing = new Map<ByteStream, PrefaceSniff>();
  /** Shutting down: connections not yet told apart are decided now (silent ones are Callisto's). */
  const settleSniffing = (): void => {
    for (const sniff of [...sniffing.values()]) sniff.settle();
  };
  const serveCallisto = (socket: ByteStream, slot: PeerSlot): void => {
    const served = serveConnection(socket, ctx, slot, () => connections.delete(served));
    connections.add(served);
    // A consumer reconnecting while we shut down learns it at once.
    if (goingAway) served.goAway(reconnect);
  };
  let listener: TransportListener | undefined;
  let port = options.port;
  let closed: Promise<void> | undefined;
  const stopListening = (): Promise<void> => listener?.close() ?? Promise.resolve();

  return {
    get port() {
      return port;
    },
    host: options.host,
    get active() {
      return limits.calls;
    },
    get openStreams() {
      return ctx.streams.open;
    },
    get connectionCount() {
      return connections.size + sniffing.size;
    },
    async listen() {
      listener = await transport.listen(
        { host: options.host, port: options.port, admit, alpnProtocols: parts.http2?.alpnProtocols },
        accept,
      );
      port = listener.port;
    },
    refuse() {
      serving.refusing = true;
    },
    goAway(andReconnect = false) {
      goingAway = true;
      reconnect = andReconnect;
      // a retiring cluster worker stops taking connections first: the others take the new ones
      if (andReconnect) void stopListening();
      settleSniffing();
      for (const connection of connections) connection.goAway(andReconnect);
    },
    drain: serving.drain,
    abandonInFlight() {
      // `started`: the call may have had effects, so only idempotent calls may be repeated elsewhere.
      const error = new RpcError('Shutdown', 'provider shut down before this call completed', {
        details: { started: true },
      });
      for (const connection of connections) connection.abandon(error);
    },
    close(graceMs = 1_000) {
      closed ??= (async () => {
        goingAway = true;
        const stopped = stopListening();
        settleSniffing();
        await Promise.all([...connections].map((connection) => connection.end(graceMs)));
        await stopped;
      })();
      return closed;
    },
    destroy() {
      goingAway = true;
      closed ??= stopListening();
      for (const socket of sniffing.keys()) socket.destroy();
      for (const connection of connections) connection.destroy();
    },
  };
}
