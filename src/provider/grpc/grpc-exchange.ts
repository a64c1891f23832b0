/**
 * One gRPC call's HTTP/2 stream as the entry writes it (gRPC over HTTP/2, "Responses"): the response
 * headers once (`:status 200`, the content type, `grpc-encoding` when messages are compressed), then
 * length-prefixed messages, then the trailers (`grpc-status`, `grpc-message`, the details and the
 * response attachments as metadata). An error before any message goes out is a *trailers-only*
 * response: one HEADERS frame with the status and END_STREAM. Every write after the end, or after the
 * client went away, is dropped.
 *
 * The hot path allocates no header object of its own: the response headers for each content type and
 * encoding, and the trailers of a call that ends OK without attachments, are made once (node:http2
 * copies what it is given), and the `wantTrailers` listener is one function for every stream.
 */
import type http2 from 'node:http2';
import zlib from 'node:zlib';
import type { Attachments } from '../../core/invocation.js';
import { encodeGrpcMessage, FLAG_COMPRESSED } from '../../protocol/grpc/message-frame.js';
import { addAttachmentHeaders } from '../../protocol/grpc/metadata.js';
import { GrpcStatus } from '../../protocol/grpc/status.js';
import { encodeStatusMessage } from '../../protocol/grpc/status-message.js';

/** Messages at least this large are compressed when the call uses gzip. */
const COMPRESS_ABOVE_BYTES = 1024;

/** The end of a call: its status, message and extra trailers (details, `callisto-code`, attachments). */
export interface GrpcEnd {
  readonly status: number;
  readonly message?: string | undefined;
  readonly trailers?: http2.OutgoingHttpHeaders | undefined;
  readonly attachments?: Attachments | undefined;
}

/** The end of a call that succeeded without response attachments. */
export const GRPC_OK: GrpcEnd = Object.freeze({ status: GrpcStatus.OK });

export interface GrpcExchange {
  readonly stream: http2.ServerHttp2Stream;
  /** Whether the response headers went out (an error after that goes in the trailers). */
  readonly started: boolean;
  /** Whether the call's end (trailers or trailers-only) was written, or the stream is gone. */
  readonly ended: boolean;
  /** Sends the response headers now if they were not sent (a stream's start). */
  start(): void;
  /** Writes one message; false when the stream's buffer is full (wait for 'drain' before the next). */
  send(payload: Uint8Array): boolean;
  /** Writes the end: trailers after the messages, or a trailers-only response. */
  end(end: GrpcEnd): void;
}

export interface GrpcExchangeInit {
  readonly stream: http2.ServerHttp2Stream;
  readonly contentType: string;
  /** Compress messages with gzip (the request came gzip-encoded). */
  readonly gzip: boolean;
  /** Headers sent with the response headers (the call's id). */
  readonly headers?: http2.OutgoingHttpHeaders | undefined;
}

const TRAILERS_OK: http2.OutgoingHttpHeaders = Object.freeze({ 'grpc-status': String(GrpcStatus.OK) });
/** No `date` header (gRPC has no use for it; node:http2 formats one per response otherwise). */
const RESPOND_STREAMING: http2.ServerStreamResponseOptions = Object.freeze({
  waitForTrailers: true,
  sendDate: false,
});
const RESPOND_TRAILERS_ONLY: http2.ServerStreamResponseOptions = Object.freeze({
  endStream: true,
  sendDate: false,
});

/** The response headers for `contentType` and `gzip` (made once per pair; node:http2 copies them). */
const responseHeaders = new Map<string, http2.OutgoingHttpHeaders>();
function responseHeadersOf(contentType: string, gzip: boolean): http2.OutgoingHttpHeaders {
  const key = gzip ? `${contentType};gzip` : contentType;
  let headers = responseHeaders.get(key);
  if (headers === undefined) {
    headers = Object.freeze({
      ':status': 200,
      'content-type': contentType,
      ...(gzip ? { 'grpc-encoding': 'gzip' } : {}),
      'grpc-accept-encoding': 'identity,gzip',
    });
    // a handful of content types are served; a client's own cannot grow this (they are refused before)
    if (responseHeaders.size < 64) responseHeaders.set(key, headers);
  }
  return headers;
}

/** The trailers (or the trailers-only headers' status part) of `end`. */
function endHeaders(end: GrpcEnd): http2.OutgoingHttpHeaders {
  if (
    end.status === GrpcStatus.OK &&
    end.attachments === undefined &&
    end.trailers === undefined &&
    !end.message
  )
    return TRAILERS_OK;
  const headers: http2.OutgoingHttpHeaders = {};
  addAttachmentHeaders(headers, end.attachments);
  Object.assign(headers, end.trailers);
  headers['grpc-status'] = String(end.status);
  if (end.message) headers['grpc-message'] = encodeStatusMessage(end.message.slice(0, 4096));
  return headers;
}

const EXCHANGE = Symbol('callisto.grpcExchange');
type TaggedStream = http2.ServerHttp2Stream & { [EXCHANGE]?: ServerExchange };

/** One listener for every stream: the trailers its exchange holds. */
function sendPendingTrailers(this: TaggedStream): void {
  if (this.destroyed) return;
  try {
    this.sendTrailers(this[EXCHANGE]?.pendingTrailers ?? TRAILERS_OK);
  } catch {
    // the stream closed in between: nothing to send it on
  }
}

class ServerExchange implements GrpcExchange {
  readonly stream: http2.ServerHttp2Stream;
  readonly #contentType: string;
  readonly #gzip: boolean;
  readonly #headers: http2.OutgoingHttpHeaders | undefined;
  #started = false;
  #ended = false;
  pendingTrailers: http2.OutgoingHttpHeaders | undefined = undefined;

  constructor(init: GrpcExchangeInit) {
    this.stream = init.stream;
    this.#contentType = init.contentType;
    this.#gzip = init.gzip;
    this.#headers = init.headers;
  }

  #gone(): boolean {
    const stream = this.stream;
    return this.#ended || stream.destroyed || stream.closed;
  }

  get started(): boolean {
    return this.#started;
  }

  get ended(): boolean {
    return this.#gone();
  }

  start(): void {
    if (this.#started || this.#gone()) return;
    this.#started = true;
    const stream = this.stream as TaggedStream;
    const headers = responseHeadersOf(this.#contentType, this.#gzip);
    stream.respond(
      this.#headers === undefined ? headers : { ...headers, ...this.#headers },
      RESPOND_STREAMING,
    );
    stream[EXCHANGE] = this;
    stream.on('wantTrailers', sendPendingTrailers);
  }

  send(payload: Uint8Array): boolean {
    if (this.#gone()) return true;
    this.start();
    const frame =
      this.#gzip && payload.length >= COMPRESS_ABOVE_BYTES
        ? encodeGrpcMessage(zlib.gzipSync(payload), FLAG_COMPRESSED)
        : encodeGrpcMessage(payload);
    return this.stream.write(frame);
  }

  end(end: GrpcEnd): void {
    if (this.#gone()) return;
    this.#ended = true;
    const headers = endHeaders(end);
    if (!this.#started) {
      // trailers-only: one HEADERS frame with END_STREAM
      this.#started = true;
      this.stream.respond(
        { ':status': 200, 'content-type': this.#contentType, ...this.#headers, ...headers },
        RESPOND_TRAILERS_ONLY,
      );
      return;
    }
    this.pendingTrailers = headers;
    this.stream.end();
  }
}

export function createGrpcExchange(init: GrpcExchangeInit): GrpcExchange {
  return new ServerExchange(init);
}
