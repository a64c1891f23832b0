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
import zlib from 'node:zlib';
import type { ErrorCodeName } from '../../core/rpc-error.js';
import { messageOf, RpcError } from '../../core/rpc-error.js';
import { CALL_ID_ATTACHMENT, validCallId } from '../../observability/call-id.js';
import {
  FLAG_COMPRESSED,
  type GrpcMessage,
  GrpcMessageDecoder,
  GrpcMessageTooLargeError,
} from '../../protocol/grpc/message-frame.js';
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
    connect === undefined ? readMessages(ctx, stream, gzip, onRefused) : readBody(ctx, stream, onRefused);
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

/** A header list's size as HTTP/2 counts it (RFC 7541 §4.1: name, value and 32 bytes per field). */
function headerListBytes(headers: http2.IncomingHttpHeaders): number {
  let bytes = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) bytes += name.length + String(one).length + 32;
  }
  return bytes;
}

/** `connect-timeout-ms`: up to 10 digits of milliseconds. */
function parseConnectTimeout(value: string | undefined): number | undefined | Error {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) {
    return new Error(`connect-timeout-ms ${JSON.stringify(value.slice(0, 20))} is not 1-10 digits`);
  }
  return Number(value);
}

/** A Connect unary request's body: one bare message, at most `maxMessageBytes`. */
function readBody(
  ctx: GrpcCallContext,
  stream: http2.ServerHttp2Stream,
  onRefused: (reason: string) => void,
): Reading {
  const { maxMessageBytes } = ctx.options;
  const chunks: Buffer[] = [];
  let length = 0;
  let failed = false;
  let messageListener: ((bytes: Buffer) => void) | undefined;
  let endListener: (() => void) | undefined;
  let failureListener: ((error: RpcError) => void) | undefined;
  const onData = (chunk: Buffer): void => {
    length += chunk.length;
    if (length > maxMessageBytes) {
      failed = true;
      stream.off('data', onData);
      const error = new RpcError(
        'RateLimited',
        `a body over server.grpc.maxMessageBytes (${maxMessageBytes})`,
      );
      onRefused(error.message);
      failureListener?.(error);
      return;
    }
    chunks.push(chunk);
  };
  stream.on('data', onData);
  stream.once('end', () => {
    if (failed || stream.aborted) return;
    messageListener?.(Buffer.concat(chunks, length));
    endListener?.();
  });
  return {
    onMessage: (listener) => {
      messageListener = listener;
    },
    onEnd: (listener) => {
      endListener = listener;
    },
    onFailure: (listener) => {
      failureListener = listener;
    },
  };
}

interface Reading {
  onMessage(listener: (bytes: Buffer) => void): void;
  onEnd(listener: () => void): void;
  onFailure(listener: (error: RpcError) => void): void;
}

/**
 * Reads the request's messages: each length checked from its prefix, inflated within
 * `maxMessageBytes` when compressed. A failure stops reading.
 */
function readMessages(
  ctx: GrpcCallContext,
  stream: http2.ServerHttp2Stream,
  gzip: boolean,
  onRefused: (reason: string) => void,
): Reading {
  const { maxMessageBytes } = ctx.options;
  const decoder = new GrpcMessageDecoder(maxMessageBytes);
  const messageListeners: Array<(bytes: Buffer) => void> = [];
  let endListener: (() => void) | undefined;
  let failureListener: ((error: RpcError) => void) | undefined;
  let failed = false;
  const fail = (error: RpcError): void => {
    if (failed) return;
    failed = true;
    onRefused(error.message);
    stream.off('data', onData);
    failureListener?.(error);
  };
  const inflate = (message: GrpcMessage): Buffer | undefined => {
    if ((message.flags & FLAG_COMPRESSED) === 0) return message.data;
    if (!gzip) {
      fail(new RpcError('Internal', 'a compressed message without grpc-encoding'));
      return undefined;
    }
    try {
      return zlib.gunzipSync(message.data, { maxOutputLength: maxMessageBytes });
    } catch (error) {
      const tooLarge =
        (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError;
      fail(
        tooLarge
          ? new RpcError(
              'RateLimited',
              `a gzip message inflates past server.grpc.maxMessageBytes (${maxMessageBytes})`,
            )
          : new RpcError('Serialization', `a gzip message does not inflate: ${messageOf(error)}`),
      );
      return undefined;
    }
  };
  const onData = (chunk: Buffer): void => {
    let messages: GrpcMessage[];
    try {
      messages = decoder.push(chunk);
    } catch (error) {
      if (error instanceof GrpcMessageTooLargeError) {
        fail(
          new RpcError(
            'RateLimited',
            `a message of ${error.length} bytes is over server.grpc.maxMessageBytes (${maxMessageBytes})`,
          ),
        );
      } else fail(new RpcError('BadRequest', messageOf(error)));
      return;
    }
    for (const message of messages) {
      const bytes = inflate(message);
      if (bytes === undefined) return;
      for (const listener of messageListeners) listener(bytes);
    }
  };
  stream.on('data', onData);
  stream.once('end', () => {
    // a stream the client reset ends too: there is nobody to answer
    if (failed || stream.aborted || (stream.rstCode ?? NO_ERROR) !== NO_ERROR) return;
    if (!decoder.atBoundary) {
      fail(new RpcError('BadRequest', 'the request ended inside a message'));
      return;
    }
    endListener?.();
  });
  return {
    onMessage: (listener) => messageListeners.push(listener),
    onEnd: (listener) => {
      endListener = listener;
    },
    onFailure: (listener) => {
      failureListener = listener;
    },
  };
}
