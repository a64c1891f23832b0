/**
 * One gRPC request (one HTTP/2 stream) as the entry reads it, up to the call of the provider entry
 * (provider/entry.ts): the method from `:path` (grpc-routes.ts), the protocol and message format from
 * `content-type` (requestKindOf), `grpc-timeout` as the call's deadline, metadata as attachments
 * (`authorization` for the auth filter, `traceparent` for the tracing filter), `grpc-encoding` gzip.
 * Every length prefix is checked against `maxMessageBytes` before a byte of its message is buffered,
 * and a gzip message is inflated to at most that many bytes.
 *
 * A unary or server-stream call is entered once its one request message is complete; a client or
 * two-way stream at once, its messages going to the stream's inbox as they arrive. What is refused
 * before the entry (no such method, a wrong content type, a bad timeout) is a trailers-only answer.
 */
import http2 from 'node:http2';
import type { ErrorCodeName } from '../../core/rpc-error.js';
import { RpcError } from '../../core/rpc-error.js';
import { CALL_ID_ATTACHMENT, validCallId } from '../../observability/call-id.js';
import { attachmentsFromHeaders } from '../../protocol/grpc/metadata.js';
import { GrpcStatus } from '../../protocol/grpc/status.js';
import { parseGrpcTimeout } from '../../protocol/grpc/timeout.js';
import type { PeerCertificate } from '../../security/peer-certificate.js';
import type { Serializer } from '../../serialization/serializer.js';
import type { StreamKind } from '../../service/define-service.js';
import type { ArgumentsReader } from '../arguments-reader.js';
import type { EntryCallInit, ProviderEntry } from '../entry.js';
import type { PeerSlot } from '../peer-limits.js';
import type { ServerInvocation } from '../server-invocation.js';
import type { ExportedMethod } from '../service-table.js';
import { createConnectStreamExchange } from './connect-stream.js';
import { createConnectExchange } from './connect-unary.js';
import type { GrpcCors } from './grpc-cors.js';
import { grpcEndFor } from './grpc-errors.js';
import { createGrpcExchange, type GrpcExchange } from './grpc-exchange.js';
import { contentTypeOf, type GrpcFormat, type GrpcMessages, grpcMessagesOf } from './grpc-messages.js';
import type { GrpcOptions } from './grpc-options.js';
import {
  headerListBytes,
  parseConnectTimeout,
  type ReadingSink,
  readBody,
  readMessages,
  readMessagesInto,
} from './grpc-request-body.js';
import type { GrpcRoutes, GrpcTarget } from './grpc-routes.js';
import { TRI_GROUP_HEADER, TRI_VERSION_HEADER } from './grpc-routes.js';
import { createGrpcStreamPort, type GrpcStreamPort } from './grpc-stream-port.js';
import { createGrpcWebExchange } from './grpc-web.js';

/** What the entry keeps on an invocation it entered (`invocation.origin`). */
export interface GrpcCallState {
  readonly exchange: GrpcExchange;
  readonly messages: GrpcMessages;
  readonly port: GrpcStreamPort | undefined;
  /** The `grpc-timeout` timer while it runs (set and cleared by the entry). */
  timer: NodeJS.Timeout | undefined;
}

/** A built-in service's method (health, reflection): served here, outside the provider chain. */
export type GrpcBuiltin = (call: GrpcBuiltinCall) => void;

export interface GrpcBuiltinCall {
  readonly exchange: GrpcExchange;
  /** Every request message, as it arrives (decoded from its prefix, inflated). */
  onMessage(listener: (bytes: Buffer) => void): void;
  /** The client ended its side. */
  onEnd(listener: () => void): void;
  /** The client went away (or the entry closed). */
  onClose(listener: () => void): void;
}

/** What the calls of one entry share. */
export interface GrpcCallContext {
  readonly options: GrpcOptions;
  readonly routes: GrpcRoutes;
  readonly entry: ProviderEntry;
  readonly json: Serializer;
  readonly protobuf: Serializer;
  readonly decodeLimits: { readonly maxElements: number };
  readonly reader: ArgumentsReader;
  readonly builtins: ReadonlyMap<string, GrpcBuiltin>;
  /** Cross-origin calls from web pages, when `server.grpc.corsOrigins` lists any (grpc-cors.ts). */
  readonly cors: GrpcCors | undefined;
  /** A request refused for what it carries (logged, rate-limited, naming the peer). */
  onRefused(remote: string, reason: string): void;
  /** A filter or the handler read the call's signal: the entry then watches for the client going away. */
  onSignal(invocation: ServerInvocation): void;
}

/** What the session a stream belongs to holds for its calls. */
export interface GrpcPeer {
  readonly remote: string;
  readonly slot: PeerSlot;
  readonly peerCertificate: PeerCertificate | undefined;
}

const NO_ERROR = http2.constants.NGHTTP2_NO_ERROR;

/** Answers a request before it entered, and stops reading what the client still sends. */
function refuse(exchange: GrpcExchange, code: ErrorCodeName, message: string): void {
  exchange.end(grpcEndFor(code, message));
  const { stream } = exchange;
  if (!stream.readableEnded && !stream.destroyed) stream.close(NO_ERROR);
}

/**
 * The protocol a request speaks, by its `content-type`: gRPC, gRPC-Web, Connect's unary calls or its
 * streams (connect-unary.ts, connect-stream.ts). `format` is null for a type none of them has (not
 * gRPC at all: 415), undefined for one of theirs that is not served, else the messages' format.
 */
type WireProtocol = 'grpc' | 'grpc-web' | 'connect' | 'connect-stream';
interface RequestKind {
  readonly protocol: WireProtocol;
  readonly format: GrpcFormat | undefined | null;
}

/** The content types clients send, classified once (anything else goes through the parsers). */
const KNOWN_TYPES: ReadonlyMap<string, RequestKind> = new Map<string, RequestKind>([
  ['application/grpc', { protocol: 'grpc', format: 'proto' }],
  ['application/grpc+proto', { protocol: 'grpc', format: 'proto' }],
  ['application/grpc+json', { protocol: 'grpc', format: 'json' }],
  ['application/grpc-web', { protocol: 'grpc-web', format: 'proto' }],
  ['application/grpc-web+proto', { protocol: 'grpc-web', format: 'proto' }],
  ['application/grpc-web+json', { protocol: 'grpc-web', format: 'json' }],
  ['application/proto', { protocol: 'connect', format: 'proto' }],
  ['application/json', { protocol: 'connect', format: 'json' }],
  ['application/connect+proto', { protocol: 'connect-stream', format: 'proto' }],
  ['application/connect+json', { protocol: 'connect-stream', format: 'json' }],
]);

/** Types of the protocols served here in a format that is not: refused naming the ones that are. */
const UNSERVED_FORMATS: ReadonlyArray<readonly [prefix: string, protocol: WireProtocol]> = [
  ['application/grpc-web', 'grpc-web'],
  ['application/connect+', 'connect-stream'],
  ['application/grpc+', 'grpc'],
];

const NOT_GRPC: RequestKind = Object.freeze({ protocol: 'grpc', format: null });

function requestKindOf(contentType: string | undefined): RequestKind {
  if (contentType === undefined) return NOT_GRPC;
  const known = KNOWN_TYPES.get(contentType);
  if (known !== undefined) return known;
  // parameters (`; charset=utf-8`) and case do not matter
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  const bare = KNOWN_TYPES.get(type);
  if (bare !== undefined) return bare;
  for (const [prefix, protocol] of UNSERVED_FORMATS) {
    if (type.startsWith(prefix)) return { protocol, format: undefined };
  }
  return NOT_GRPC;
}

/** What the exchange of a call is made for. */
interface ExchangeInit {
  readonly protocol: WireProtocol;
  readonly stream: http2.ServerHttp2Stream;
  readonly format: GrpcFormat;
  readonly gzip: boolean;
  /** Headers every answer carries (CORS), if any. */
  readonly headers: http2.OutgoingHttpHeaders | undefined;
}

/** The exchange that writes the answer in its protocol. */
function exchangeFor(init: ExchangeInit): GrpcExchange {
  const { protocol, stream, format, gzip, headers } = init;
  if (protocol === 'connect') return createConnectExchange(stream, format, headers);
  if (protocol === 'connect-stream') return createConnectStreamExchange(stream, format, headers);
  if (protocol === 'grpc-web') return createGrpcWebExchange(stream, format, headers);
  return createGrpcExchange({ stream, contentType: contentTypeOf(format), gzip, headers });
}

/** Each method's messages per format, made at its first call (its serializers do not change). */
const messagesByMethod = new WeakMap<
  ExportedMethod,
  { ctx: GrpcCallContext; proto?: GrpcMessages | Error; json?: GrpcMessages | Error }
>();

function messagesFor(ctx: GrpcCallContext, target: GrpcTarget, format: GrpcFormat): GrpcMessages | Error {
  let cached = messagesByMethod.get(target.method);
  if (cached === undefined || cached.ctx !== ctx) {
    cached = { ctx };
    messagesByMethod.set(target.method, cached);
  }
  let messages = cached[format];
  if (messages === undefined) {
    messages = grpcMessagesOf({
      definition: target.exported.definition,
      method: target.method.name,
      format,
      json: ctx.json,
      protobuf: ctx.protobuf,
      limits: ctx.decodeLimits,
    });
    cached[format] = messages;
  }
  return messages;
}

interface GrpcServerCallInit {
  readonly ctx: GrpcCallContext;
  readonly peer: GrpcPeer;
  readonly exchange: GrpcExchange;
  readonly messages: GrpcMessages;
  readonly port: GrpcStreamPort | undefined;
  readonly kind: StreamKind | undefined;
  readonly method: ExportedMethod;
  readonly headers: http2.IncomingHttpHeaders;
  readonly deadline: number;
}

/**
 * One call from its request's first byte to its entry into the provider chain: the reading's sink, and
 * the state the entry keeps on the invocation (`origin`). One object per call, no closures.
 */
class GrpcServerCall implements GrpcCallState, ReadingSink {
  readonly exchange: GrpcExchange;
  readonly messages: GrpcMessages;
  readonly port: GrpcStreamPort | undefined;
  timer: NodeJS.Timeout | undefined = undefined;
  readonly #init: GrpcServerCallInit;
  #request: Buffer | undefined = undefined;
  #extra = false;

  constructor(init: GrpcServerCallInit) {
    this.#init = init;
    this.exchange = init.exchange;
    this.messages = init.messages;
    this.port = init.port;
  }

  /** Whether the client sends a stream of messages (entered at once, its messages to the port). */
  get #streamsIn(): boolean {
    const kind = this.#init.kind;
    return kind === 'client' || kind === 'bidi';
  }

  enter(body: Buffer | undefined): void {
    const { ctx, peer, method, headers } = this.#init;
    const attachments = attachmentsFromHeaders(headers);
    const init: EntryCallInit = {
      method,
      attachments,
      callId: validCallId(attachments[CALL_ID_ATTACHMENT]),
      deadline: this.#init.deadline,
      oneway: false,
      remoteAddress: peer.remote,
      serializer: this.messages.bodies,
      admission: peer.slot,
      peerCertificate: peer.peerCertificate,
      origin: this,
      stream: this.port,
      onSignal: ctx.onSignal,
      args: body === undefined ? [] : undefined,
      reader: body === undefined ? undefined : ctx.reader,
      body,
    };
    ctx.entry.call(init);
  }

  message(bytes: Buffer): void {
    if (this.#streamsIn) {
      this.port!.received(bytes);
      return;
    }
    if (this.#request === undefined) this.#request = bytes;
    else this.#extra = true;
  }

  end(): void {
    if (this.#streamsIn) {
      this.port!.inputEnded();
      return;
    }
    const { ctx, peer, method, kind } = this.#init;
    if (this.#extra || this.#request === undefined) {
      const problem = this.#extra ? 'more than one request message' : 'no request message';
      ctx.onRefused(peer.remote, `${method.label}: ${problem} for a ${kind ?? 'unary'} call`);
      refuse(this.exchange, 'BadRequest', `${method.label} takes one request message: got ${problem}`);
      return;
    }
    this.enter(this.#request);
  }

  failed(error: RpcError): void {
    if (this.#streamsIn) {
      this.port!.inputFailed(error);
      const { stream } = this.exchange;
      if (!stream.destroyed) stream.close(NO_ERROR);
      return;
    }
    refuse(this.exchange, error.code, error.message);
  }
}

export function serveGrpcCall(
  ctx: GrpcCallContext,
  peer: GrpcPeer,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
): void {
  const receivedAt = Date.now();
  const path = headers[':path'] ?? '';
  const headerBytes = headerListBytes(headers);
  if (headerBytes > ctx.options.maxHeaderListBytes) {
    const reason = `a header list of ${headerBytes} bytes is over server.grpc.maxHeaderListBytes (${ctx.options.maxHeaderListBytes})`;
    ctx.onRefused(peer.remote, reason);
    refuse(
      createGrpcExchange({ stream, contentType: 'application/grpc', gzip: false }),
      'RateLimited',
      reason,
    );
    return;
  }
  if (headers[':method'] === 'OPTIONS' && ctx.cors !== undefined) {
    ctx.cors.preflight(stream, headers);
    return;
  }
  const { protocol, format } = requestKindOf(headers['content-type']);
  const connect = protocol === 'connect' || protocol === 'connect-stream';
  if (headers[':method'] !== 'POST' || format === null) {
    // not gRPC at all: HTTP's own answer (gRPC over HTTP/2: 415 for a content type that is not gRPC)
    const status = headers[':method'] !== 'POST' ? 405 : 415;
    stream.respond(
      {
        ':status': status,
        'grpc-status': String(status === 415 ? GrpcStatus.UNIMPLEMENTED : GrpcStatus.UNIMPLEMENTED),
        'grpc-message':
          status === 415 ? 'content-type must be application/grpc[+proto|+json]' : 'gRPC calls are POST',
      },
      { endStream: true },
    );
    if (!stream.readableEnded) stream.close(NO_ERROR);
    return;
  }
  // Connect's streams name their messages' compression in a header of their own
  const encoding =
    (protocol === 'connect-stream' ? headers['connect-content-encoding'] : headers['grpc-encoding']) ??
    'identity';
  const gzip = encoding === 'gzip';
  const exchange = exchangeFor({
    protocol,
    stream,
    format: format ?? 'proto',
    gzip,
    headers: ctx.cors?.headersFor(headers.origin),
  });
  if (format === undefined) {
    refuse(
      exchange,
      'MethodNotFound',
      `content-type ${headers['content-type']} is not served: application/grpc[-web][+proto|+json], application/connect+proto|+json, application/proto or application/json`,
    );
    return;
  }
  if (encoding !== 'identity' && !gzip) {
    stream.respond(
      {
        ':status': 200,
        'content-type': contentTypeOf(format),
        'grpc-status': String(GrpcStatus.UNIMPLEMENTED),
        'grpc-message': `grpc-encoding ${encoding} is not supported`,
        'grpc-accept-encoding': 'identity,gzip',
      },
      { endStream: true },
    );
    if (!stream.readableEnded) stream.close(NO_ERROR);
    return;
  }
  const timeoutMs = !connect
    ? parseGrpcTimeout(headers['grpc-timeout'] as string | undefined)
    : parseConnectTimeout(headers['connect-timeout-ms'] as string | undefined);
  if (timeoutMs instanceof Error) {
    ctx.onRefused(peer.remote, timeoutMs.message);
    refuse(exchange, 'BadRequest', timeoutMs.message);
    return;
  }
  const builtin = protocol !== 'connect' ? ctx.builtins.get(path) : undefined;
  if (builtin !== undefined) {
    const reading = readMessages(ctx.options, stream, gzip, (reason) => ctx.onRefused(peer.remote, reason));
    builtin({
      exchange,
      onMessage: (listener) => reading.onMessage(listener),
      onEnd: (listener) => reading.onEnd(listener),
      onClose: (listener) => stream.once('close', listener),
    });
    reading.onFailure((error) => refuse(exchange, 'BadRequest', error.message));
    return;
  }
  const version = headers[TRI_VERSION_HEADER];
  const group = headers[TRI_GROUP_HEADER];
  const target = ctx.routes.find(
    path,
    typeof version === 'string' ? version : undefined,
    typeof group === 'string' ? group : '',
  );
  if (target instanceof RpcError) {
    // what the client sends is not read: the stream is closed after the answer
    refuse(exchange, target.code, target.message);
    return;
  }
  const { method } = target;
  const messages = messagesFor(ctx, target, format);
  if (messages instanceof Error) {
    refuse(exchange, 'MethodNotFound', messages.message);
    return;
  }
  const kind = method.declaration.stream;
  if (protocol === 'connect' && kind !== undefined) {
    refuse(
      exchange,
      'MethodNotFound',
      `${method.label} is a ${kind} stream: call it with a streaming content type (application/connect+proto or +json, or gRPC)`,
    );
    return;
  }
  const port =
    kind === undefined
      ? undefined
      : createGrpcStreamPort({
          kind,
          exchange,
          messages,
          stalledStreamTimeoutMs: ctx.options.stalledStreamTimeoutMs,
          onStalled: () =>
            ctx.onRefused(
              peer.remote,
              `gRPC stream ${method.label} reset: the client took no message for ${ctx.options.stalledStreamTimeoutMs} ms`,
            ),
        });
  const call = new GrpcServerCall({
    ctx,
    peer,
    exchange,
    messages,
    port,
    kind,
    method,
    headers,
    deadline: timeoutMs !== undefined ? receivedAt + timeoutMs : 0,
  });
  if (protocol !== 'connect') {
    readMessagesInto(stream, {
      maxMessageBytes: ctx.options.maxMessageBytes,
      gzip,
      remote: peer.remote,
      onRefused: ctx.onRefused,
      sink: call,
    });
  } else {
    const reading = readBody(ctx.options, stream, (reason) => ctx.onRefused(peer.remote, reason));
    reading.onMessage((bytes) => call.message(bytes));
    reading.onEnd(() => call.end());
    reading.onFailure((error) => call.failed(error));
  }
  if (kind === 'client' || kind === 'bidi') call.enter(undefined);
}
