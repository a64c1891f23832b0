/**
 * One gRPC request (one HTTP/2 stream) as the entry reads it, up to the call of the provider entry
 * (provider/entry.ts): the method from `:path` (grpc-routes.ts), the message format from
 * `content-type` (grpc-messages.ts), `grpc-timeout` as the call's deadline, metadata as attachments
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
import type { ArgumentsReader } from '../arguments-reader.js';
import type { ProviderEntry } from '../entry.js';
import type { PeerSlot } from '../peer-limits.js';
import { connectFormatOf, createConnectExchange } from './connect-unary.js';
import { grpcEndFor } from './grpc-errors.js';
import { createGrpcExchange, type GrpcExchange } from './grpc-exchange.js';
import { contentTypeOf, formatOf, type GrpcMessages, grpcMessagesOf } from './grpc-messages.js';
import type { GrpcOptions } from './grpc-options.js';
import { headerListBytes, parseConnectTimeout, readBody, readMessages } from './grpc-request-body.js';
import type { GrpcRoutes } from './grpc-routes.js';
import { TRI_GROUP_HEADER, TRI_VERSION_HEADER } from './grpc-routes.js';
import { createGrpcStreamPort, type GrpcStreamPort } from './grpc-stream-port.js';

/** What the entry keeps on an invocation it entered (`invocation.origin`). */
export interface GrpcCallState {
  readonly exchange: GrpcExchange;
  readonly messages: GrpcMessages;
  readonly port: GrpcStreamPort | undefined;
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
  /** A request refused for what it carries (logged, rate-limited, naming the peer). */
  onRefused(remote: string, reason: string): void;
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
  const connect = connectFormatOf(headers['content-type']);
  const format = connect ?? formatOf(headers['content-type']);
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
  const encoding = headers['grpc-encoding'] ?? 'identity';
  const gzip = encoding === 'gzip';
  const exchange =
    connect === undefined
      ? createGrpcExchange({ stream, contentType: contentTypeOf(format ?? 'proto'), gzip })
      : createConnectExchange(stream, connect);
  if (format === undefined) {
    refuse(
      exchange,
      'MethodNotFound',
      `content-type ${headers['content-type']} is not served: application/grpc, application/grpc+proto or application/grpc+json`,
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
  const timeoutMs =
    connect === undefined
      ? parseGrpcTimeout(headers['grpc-timeout'] as string | undefined)
      : parseConnectTimeout(headers['connect-timeout-ms'] as string | undefined);
  if (timeoutMs instanceof Error) {
    ctx.onRefused(peer.remote, timeoutMs.message);
    refuse(exchange, 'BadRequest', timeoutMs.message);
    return;
  }
  const onRefused = (reason: string) => ctx.onRefused(peer.remote, reason);
  const reading =
    connect === undefined
      ? readMessages(ctx.options, stream, gzip, onRefused)
      : readBody(ctx.options, stream, onRefused);
  const builtin = connect === undefined ? ctx.builtins.get(path) : undefined;
  if (builtin !== undefined) {
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
    refuse(exchange, target.code, target.message);
    return;
  }
  const { exported, method } = target;
  const messages = grpcMessagesOf({
    definition: exported.definition,
    method: method.name,
    format,
    json: ctx.json,
    protobuf: ctx.protobuf,
    limits: ctx.decodeLimits,
  });
  if (messages instanceof Error) {
    refuse(exchange, 'MethodNotFound', messages.message);
    return;
  }
  const kind = method.declaration.stream;
  if (connect !== undefined && kind !== undefined) {
    refuse(
      exchange,
      'MethodNotFound',
      `${method.label} is a ${kind} stream: call it over gRPC (Connect streams are not served)`,
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
  const attachments = attachmentsFromHeaders(headers);
  const state: GrpcCallState = { exchange, messages, port };
  const enter = (body: Buffer | undefined): void => {
    ctx.entry.call({
      method,
      attachments,
      callId: validCallId(attachments[CALL_ID_ATTACHMENT]),
      deadline: timeoutMs !== undefined ? receivedAt + timeoutMs : 0,
      oneway: false,
      remoteAddress: peer.remote,
      serializer: messages.bodies,
      admission: peer.slot,
      peerCertificate: peer.peerCertificate,
      origin: state,
      stream: port,
      ...(body === undefined ? { args: [] } : { reader: ctx.reader, body }),
    });
  };
  reading.onFailure((error) => {
    if (port !== undefined && (kind === 'client' || kind === 'bidi')) {
      port.inputFailed(error);
      if (!stream.destroyed) stream.close(NO_ERROR);
      return;
    }
    refuse(exchange, error.code, error.message);
  });
  if (kind === 'client' || kind === 'bidi') {
    reading.onMessage((bytes) => port!.received(bytes));
    reading.onEnd(() => port!.inputEnded());
    enter(undefined);
    return;
  }
  let request: Buffer | undefined;
  let extra = false;
  reading.onMessage((bytes) => {
    if (request === undefined) request = bytes;
    else extra = true;
  });
  reading.onEnd(() => {
    if (extra || request === undefined) {
      const problem = extra ? 'more than one request message' : 'no request message';
      ctx.onRefused(peer.remote, `${method.label}: ${problem} for a ${kind ?? 'unary'} call`);
      refuse(exchange, 'BadRequest', `${method.label} takes one request message: got ${problem}`);
      return;
    }
    enter(request);
  });
}
