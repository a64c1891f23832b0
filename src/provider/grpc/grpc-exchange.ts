/**
 * One gRPC call's HTTP/2 stream as the entry writes it (gRPC over HTTP/2, "Responses"): the response
 * headers once (`:status 200`, the content type, `grpc-encoding` when messages are compressed), then
 * length-prefixed messages, then the trailers (`grpc-status`, `grpc-message`, the details and the
 * response attachments as metadata). An error before any message goes out is a *trailers-only*
 * response: one HEADERS frame with the status and END_STREAM. Every write after the end, or after the
 * client went away, is dropped.
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

export function createGrpcExchange(init: GrpcExchangeInit): GrpcExchange {
  const { stream } = init;
  let started = false;
  let ended = false;
  let pendingTrailers: http2.OutgoingHttpHeaders | undefined;
  const gone = (): boolean => ended || stream.destroyed || stream.closed;

  const endHeaders = (end: GrpcEnd): http2.OutgoingHttpHeaders => {
    const headers: http2.OutgoingHttpHeaders = {};
    addAttachmentHeaders(headers, end.attachments);
    Object.assign(headers, end.trailers);
    headers['grpc-status'] = String(end.status);
    if (end.message) headers['grpc-message'] = encodeStatusMessage(end.message.slice(0, 4096));
    return headers;
  };

  const start = (): void => {
    if (started || gone()) return;
    started = true;
    stream.respond(
      {
        ':status': 200,
        'content-type': init.contentType,
        ...(init.gzip ? { 'grpc-encoding': 'gzip' } : {}),
        'grpc-accept-encoding': 'identity,gzip',
        ...init.headers,
      },
      { waitForTrailers: true },
    );
    stream.once('wantTrailers', () => {
      if (stream.destroyed) return;
      try {
        stream.sendTrailers(pendingTrailers ?? { 'grpc-status': String(GrpcStatus.OK) });
      } catch {
        // the stream closed in between: nothing to send it on
      }
    });
  };

  return {
    stream,
    get started() {
      return started;
    },
    get ended() {
      return gone();
    },
    start,
    send(payload) {
      if (gone()) return true;
      start();
      const compress = init.gzip && payload.length >= COMPRESS_ABOVE_BYTES;
      const frame = compress
        ? encodeGrpcMessage(zlib.gzipSync(payload), FLAG_COMPRESSED)
        : encodeGrpcMessage(payload);
      return stream.write(frame);
    },
    end(end) {
      if (gone()) return;
      ended = true;
      const headers = endHeaders(end);
      if (!started) {
        // trailers-only: one HEADERS frame with END_STREAM
        started = true;
        stream.respond(
          { ':status': 200, 'content-type': init.contentType, ...init.headers, ...headers },
          { endStream: true },
        );
        return;
      }
      pendingTrailers = headers;
      stream.end();
    },
  };
}
