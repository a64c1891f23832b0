/**
 * One consumer's connection as the provider serves it: decode frames, dispatch requests to the service
 * table, answer in the caller's serializer. A malformed envelope (bad magic, version, oversized frame),
 * a frame that does not complete in time or a spent partial-frame budget closes this connection only;
 * a malformed or oversized request inside a good envelope gets an error response and the connection
 * goes on. Before a request's arguments are decoded, the body is inflated within its bounds, its
 * elements are counted, and the call takes its connection's share of the execution slots and of the
 * decoded-elements budget (peer-limits.ts).
 */
import { IdTable } from '../core/id-table.js';
import type { Attachments } from '../core/invocation.js';
import { messageOf, RpcError } from '../core/rpc-error.js';
import { serviceKeyString } from '../core/service-key.js';
import { answerCompression, bodyCompression } from '../protocol/compression.js';
import { DEFAULT_STREAM_OPTIONS } from '../protocol/connection-options.js';
import { EventName, type Frame, FrameFlag, FrameKind } from '../protocol/frame.js';
import { EMPTY_BODY, readEventName } from '../protocol/frame-writer.js';
import { openFramedConnection } from '../protocol/framed-connection.js';
import { decodeRequestTail, decodeRoute, type RequestTail, routePrefixLength } from '../protocol/metadata.js';
import { createConnectionCredentials, MAX_PRESENTED_TOKEN_BYTES } from '../security/presented-credentials.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ByteStream } from '../transport/transport.js';
import { createArgumentsReader } from './arguments-reader.js';
import { createProviderEntry, type ShapedError } from './entry.js';
import { forwardedClient, hostOf, plainAddress } from './forwarded-client.js';
import { createLoadAttacher, pongLoad } from './load-reports.js';
import type { PeerSlot } from './peer-limits.js';
import type { ServerContext } from './server-context.js';
import type { ServerInvocation } from './server-invocation.js';
import { createServerStreams } from './server-streams.js';
import { type ExportedMethod, type ExportedService, methodNotFound, methodOf } from './service-table.js';
import type { StreamPort } from './stream-port.js';

export interface ServerConnection {
  readonly remoteAddress: string;
  readonly inFlight: number;
  /** Streams open on this connection. */
  readonly openStreams: number;
  /**
   * Tells the consumer "going away" (once): it sends no new calls and closes its side when answered.
   * With `reconnect`, says the address stays served (a retiring cluster worker): the consumer opens a
   * new connection to it for new calls.
   */
  goAway(reconnect?: boolean): void;
  /** Answers every call still executing with `error` (their late results are dropped). */
  abandon(error: RpcError): void;
  /**
   * Closes gracefully: says "going away" if not yet said, keeps answering until the consumer closes its
   * side (it does once it has every answer), then closes. A consumer that has not closed after
   * `graceMs` is cut off: what still runs (an open stream) is answered with Shutdown, what is queued is
   * sent, the socket ended, and destroyed `graceMs` later.
   */
  end(graceMs: number): Promise<void>;
  destroy(): void;
}

export function serveConnection(
  socket: ByteStream,
  ctx: ServerContext,
  slot: PeerSlot,
  onClose: () => void,
): ServerConnection {
  const remoteAddress = `${socket.remoteAddress}:${socket.remotePort}`;
  /** What this connection proved in its TLS handshake: every call it carries, and only those, has it. */
  const peerCertificate = socket.peerCertificate;
  // a trusted gateway's calls carry their client's address (forwarded-client.ts)
  const fromGateway = ctx.options.trustedGateways.has(plainAddress(socket.remoteAddress));
  const listCallable = ctx.options.exposeErrors === 'all';
  /** `open`; `draining` once told "going away" (calls keep being answered); `closed`. */
  let state: 'open' | 'draining' | 'closed' = 'open';
  const withSignals = new Set<ServerInvocation>();
  /** Calls executing, by request id (a consumer's cancel names the id); not a Map: core/id-table.ts. */
  const executing = new IdTable<ServerInvocation>();
  const trackSignal = (invocation: ServerInvocation): void => {
    withSignals.add(invocation);
  };
  const connectionOptions = ctx.options.connection;
  const framed = openFramedConnection(
    socket,
    {
      maxFrameBytes: connectionOptions.maxFrameBytes,
      heartbeat: connectionOptions.heartbeat,
      frameTimeoutMs: connectionOptions.frameTimeoutMs,
      compressThresholdBytes: connectionOptions.compressThresholdBytes,
      maxInflateRatio: connectionOptions.maxInflateRatio,
      compressors: connectionOptions.compressors,
      partialFrames: ctx.partialFrames,
      // The consumer is not reading: stop taking new requests until it catches up.
      readPauseBytes: ctx.options.writeHighWaterBytes,
      pongAttachments: ctx.loadReports && pongLoad(ctx.loadReports),
    },
    {
      onFrame(frame, receivedAt) {
        if (frame.kind === FrameKind.Request) onRequest(frame, receivedAt);
        else if (frame.kind >= FrameKind.StreamMessage) streams.onFrame(frame);
        else if (frame.kind === FrameKind.Event) onEvent(frame);
      },
      onPeerFailure(failure) {
        if (failure.kind === 'protocol') ctx.onProtocolError(remoteAddress, failure.error);
      },
      onClose() {
        state = 'closed';
        slot.disconnect();
        const gone = new RpcError('Cancelled', `the caller's connection (${remoteAddress}) closed`);
        for (const invocation of withSignals) invocation.abort(gone);
        withSignals.clear();
        streams.stopAll(gone);
        onClose();
      },
    },
  );
  const writer = framed.writer;
  const streams = createServerStreams({
    writer,
    options: connectionOptions.streams ?? DEFAULT_STREAM_OPTIONS,
    shared: ctx.streams,
    maxOpenStreams: ctx.options.maxOpenStreams,
    onViolation(error) {
      ctx.onProtocolError(remoteAddress, error);
      socket.destroy();
    },
  });

  /** An answer's attachments, with the provider's load report when this connection has not had it yet. */
  const withLoad = createLoadAttacher(ctx.loadReports);

  /** Writes a shaped error as the response to `id` (in json for a format that carries only messages). */
  const writeError = (answer: ErrorAnswer): void => {
    const { payload } = answer.error;
    // a format that carries only a method's messages (protobuf) writes its errors in json
    const target = answer.serializer.errors ?? answer.serializer;
    let body: Uint8Array;
    try {
      body = target.encode(payload);
    } catch {
      body = target.encode({ name: payload.name, message: payload.message, details: {} });
    }
    writer.response({
      requestId: answer.id,
      serializer: target.id,
      status: answer.error.status,
      body,
      attachments: withLoad(answer.attachments),
    });
  };

  /** Answers `id` with an error refused before any method ran (no declared errors, no label). */
  const refuse = (id: number, serializer: Serializer, error: unknown): void =>
    writeError({ id, serializer, error: entry.shape(error, { remote: remoteAddress }) });

  /** Sends a result; compressed only with a compressor the consumer offered. */
  const answer = (invocation: ServerInvocation, value: unknown): void => {
    const serializer = invocation.serializer!;
    const attachments = invocation.answerAttachments;
    const id = invocation.requestId;
    let body: Uint8Array;
    try {
      body = value === undefined ? EMPTY_BODY : serializer.encode(value);
    } catch (error) {
      // The handler succeeded; failing to put its result on the wire is Callisto's failure.
      const failure = new RpcError(
        'Internal',
        `cannot encode the result of ${invocation.label}: ${messageOf(error)}`,
      );
      writeError({ id, serializer, error: entry.shape(failure, { remote: remoteAddress }), attachments });
      return;
    }
    // only with the compressor the consumer offered (bit 3, byte 7), else uncompressed
    const compressed =
      invocation.answerCompression >= 0 ? framed.compress(body, invocation.answerCompression) : undefined;
    const flags = compressed ? FrameFlag.Compressed : 0;
    writer.response({
      requestId: id,
      serializer: serializer.id,
      status: 0,
      body: compressed ?? body,
      flags,
      compressor: compressed ? invocation.answerCompression : 0,
      attachments: withLoad(attachments),
    });
  };

  /** The wire's side of the provider entry (entry.ts): tracking by request id, answers as frames. */
  const entry = createProviderEntry(
    {
      exposeStack: ctx.options.exposeStack,
      exposeErrors: ctx.options.exposeErrors,
      // the connection's own address (a gateway's forwarded client is in the call's fields)
      onScrubbed: (scrubbed) => ctx.onScrubbed({ ...scrubbed, remote: remoteAddress }),
    },
    {
      began: (invocation) => executing.set(invocation.requestId, invocation),
      ended(invocation) {
        executing.delete(invocation.requestId);
        if (invocation.hasSignal) withSignals.delete(invocation);
        if (invocation.stream !== undefined) streams.release(invocation.requestId);
        ctx.onCallEnded();
      },
      answer,
      fail: (invocation, error) =>
        writeError({
          id: invocation.requestId,
          serializer: invocation.serializer!,
          error,
          attachments: invocation.answerAttachments,
        }),
    },
  );

  /** Credentials this connection presented once (an `authenticate` event), for its calls without. */
  const credentials = createConnectionCredentials();
  let acknowledged = false;

  const onEvent = (frame: Frame): void => {
    const name = readEventName(frame.meta);
    if (name === EventName.Cancel) onCancel(frame.requestId);
    else if (name === EventName.Authenticate) onAuthenticate(frame.body);
  };

  /** The consumer presents credentials for its calls from now on: keep them, say so once. */
  const onAuthenticate = (body: Buffer): void => {
    const token = body.length <= MAX_PRESENTED_TOKEN_BYTES ? body.toString('utf8').trim() : '';
    if (token === '' || token.includes('\uFFFD')) {
      const why =
        body.length > MAX_PRESENTED_TOKEN_BYTES ? `over ${MAX_PRESENTED_TOKEN_BYTES} bytes` : 'not a token';
      ctx.onProtocolError(remoteAddress, new Error(`an authenticate event with credentials ${why}`));
      socket.destroy();
      return;
    }
    credentials.present(token);
    if (acknowledged || state === 'closed') return;
    acknowledged = true;
    writer.event(EventName.Authenticated, 0, EMPTY_BODY);
  };

  /** The consumer gave the call up: abort its handler's signal; the answer would go nowhere, skip it. */
  const onCancel = (id: number): void => {
    const invocation = executing.get(id);
    if (invocation === undefined || invocation.answered) return;
    invocation.answered = true;
    const reason = new RpcError(
      'Cancelled',
      `${invocation.service.name}.${invocation.method} was cancelled by the caller`,
    );
    invocation.abort(reason);
    invocation.stream?.stop(reason);
  };

  const argumentsReader = createArgumentsReader(
    { decode: ctx.decodeLimits, inflate: framed.inflate },
    (reason) => ctx.onRefused(remoteAddress, reason),
  );

  let routeCache: RouteEntry | undefined;
  /** Looks a route up in the service table; the answer (or the error) is cached by its bytes. */
  const resolveRoute = (metaBytes: Buffer, prefixLength: number): RouteEntry => {
    const prefix = Buffer.from(metaBytes.subarray(0, prefixLength));
    const version = ctx.table.version;
    let meta: ReturnType<typeof decodeRoute>;
    try {
      meta = decodeRoute(metaBytes);
    } catch (error) {
      return {
        prefix,
        version,
        error: new RpcError('BadRequest', `malformed request metadata: ${messageOf(error)}`),
      };
    }
    const exported = ctx.table.lookup(meta.service, meta.version, meta.group);
    if (exported === undefined || !exported.servedOn.callisto) {
      const key = serviceKeyString({ name: meta.service, version: meta.version, group: meta.group });
      return {
        prefix,
        version,
        error: new RpcError('ServiceNotFound', `service ${key} is not provided here`),
      };
    }
    const method = methodOf(exported, meta.method);
    if (method === undefined) {
      return { prefix, version, error: methodNotFound(exported, meta.method, listCallable) };
    }
    return { prefix, version, exported, method };
  };

  const onRequest = (frame: Frame, chunkTime: number): void => {
    const id = frame.requestId;
    const oneway = (frame.flags & FrameFlag.OneWay) !== 0;
    if ((frame.flags & FrameFlag.Stream) !== 0) streams.seen(id);
    const serializer = ctx.serializers[frame.serializer];
    if (serializer === undefined) {
      if (!oneway) {
        refuse(
          id,
          ctx.fallbackSerializer,
          new RpcError('BadRequest', `serializer id ${frame.serializer} is not accepted here`),
        );
      }
      return;
    }
    const prefixLength = routePrefixLength(frame.meta);
    if (prefixLength < 0) {
      if (!oneway)
        refuse(id, serializer, new RpcError('BadRequest', 'malformed request metadata: truncated route'));
      return;
    }
    // Consecutive calls usually target the same method: compare bytes instead of decoding strings.
    let route = routeCache;
    if (
      route === undefined ||
      route.version !== ctx.table.version ||
      !sameRoute(frame.meta, prefixLength, route.prefix)
    ) {
      route = resolveRoute(frame.meta, prefixLength);
      // Only successes are kept: a service provided later must be found at once.
      routeCache = route.error === undefined ? route : undefined;
    }
    if (route.error !== undefined) {
      if (!oneway) refuse(id, serializer, route.error);
      return;
    }
    const exported = route.exported!;
    const method = route.method!;
    let bodies = serializer;
    if (serializer.forMethod !== undefined) {
      try {
        bodies = serializer.forMethod(exported.definition, method.name, 'provider');
      } catch (error) {
        if (!oneway) refuse(id, ctx.fallbackSerializer, new RpcError('BadRequest', messageOf(error)));
        return;
      }
    }
    let meta: RequestTail;
    try {
      meta = decodeRequestTail(frame.meta, prefixLength);
    } catch (error) {
      if (!oneway)
        refuse(id, serializer, new RpcError('BadRequest', `malformed request metadata: ${messageOf(error)}`));
      return;
    }
    const deadline = meta.timeoutMs > 0 ? chunkTime + meta.timeoutMs : 0;
    let stream: StreamPort | undefined;
    const streamKind = method.declaration.stream;
    if (streamKind !== undefined || (frame.flags & FrameFlag.Stream) !== 0) {
      if (oneway) return;
      const opened = openStream(id, frame.flags, method, bodies, deadline);
      if (opened instanceof RpcError) {
        refuse(id, serializer, opened);
        return;
      }
      stream = opened;
    }
    const client = forwardedClient(meta.attachments, fromGateway);
    entry.call({
      method,
      attachments: meta.attachments,
      deadline,
      oneway,
      remoteAddress: client ?? remoteAddress,
      requestId: id,
      serializer: bodies,
      admission: client === undefined ? slot : ctx.limits.forwarded(hostOf(client)),
      onSignal: trackSignal,
      reader: argumentsReader,
      body: frame.body,
      compression: bodyCompression(frame),
      peerCertificate,
      presented: credentials.current,
      answerCompression: answerCompression(frame),
      callId: meta.callId,
      stream,
    });
  };

  /** Opens the stream a request asks for, or says why not (a unary method, the limit reached). */
  const openStream = (
    id: number,
    flags: number,
    method: ExportedMethod,
    bodies: Serializer,
    deadline: number,
  ): StreamPort | RpcError => {
    const kind = method.declaration.stream;
    if (kind === undefined) return new RpcError('BadRequest', `${method.label} is not a stream method`);
    if ((flags & FrameFlag.Stream) === 0) {
      return new RpcError('BadRequest', `${method.label} is a ${kind} stream: open it as a stream`);
    }
    if (state !== 'open') {
      return new RpcError('Shutdown', `${remoteAddress}: this provider is going away`, { neverSent: true });
    }
    return streams.open(id, kind, bodies, deadline);
  };

  const goAway = (reconnect = false): void => {
    if (state !== 'open') return;
    state = 'draining';
    writer.event(reconnect ? EventName.Reconnect : EventName.GoAway, 0, EMPTY_BODY);
    writer.flush();
  };

  const connection: ServerConnection = {
    remoteAddress,
    get inFlight() {
      return executing.size;
    },
    get openStreams() {
      return streams.size;
    },
    goAway,
    abandon(error) {
      for (const invocation of executing.values()) {
        if (invocation.answered || invocation.oneway) continue;
        invocation.answered = true;
        invocation.abort(error);
        invocation.stream?.stop(error);
        refuse(invocation.requestId, invocation.serializer!, error);
      }
    },
    end(graceMs) {
      if (socket.destroyed) return Promise.resolve();
      return new Promise<void>((resolve) => {
        let timer = setTimeout(() => {
          // what still runs (an open stream holds its connection) ends with Shutdown before the
          // socket does, so its caller is told why rather than seeing the connection drop
          connection.abandon(
            new RpcError('Shutdown', 'provider shut down before this call completed', {
              details: { started: true },
            }),
          );
          framed.end();
          timer = setTimeout(() => socket.destroy(), graceMs);
          timer.unref();
        }, graceMs);
        timer.unref();
        socket.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        goAway();
      });
    },
    destroy() {
      socket.destroy();
    },
  };
  return connection;
}

/** An error response to write. */
interface ErrorAnswer {
  readonly id: number;
  readonly serializer: Serializer;
  readonly error: ShapedError;
  readonly attachments?: Attachments | undefined;
}

interface RouteEntry {
  prefix: Buffer;
  /** The service table's version when resolved. */
  version: number;
  exported?: ExportedService;
  method?: ExportedMethod;
  error?: RpcError;
}

function sameRoute(meta: Buffer, prefixLength: number, cached: Buffer): boolean {
  return cached.length === prefixLength && meta.compare(cached, 0, prefixLength, 0, prefixLength) === 0;
}
