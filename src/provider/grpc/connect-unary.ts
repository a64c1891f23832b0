/**
 * The Connect protocol's unary calls (connectrpc.com/docs/protocol, "Unary-Request") on the gRPC
 * entry, over HTTP/2: `POST /<package.Service>/<Method>` with `content-type: application/proto` (a
 * service declared with protobuf: the bare request message) or `application/json` (any service: the
 * JSON array of the arguments, as on `application/grpc+json`), `connect-timeout-ms` as the deadline.
 * The answer is the bare response message with HTTP 200, the response attachments as `trailer-`
 * headers; an error is the HTTP status of its code with `{"code", "message"}` JSON (the same gRPC
 * status table, by Connect's names). Everything else — routing, the provider chain, limits, error
 * shaping — is the gRPC entry's: this file only writes the answer (a GrpcExchange) and reads the body.
 * Streams over Connect have content types of their own (connect-stream.ts).
 */
import type http2 from 'node:http2';
import { addAttachmentHeaders } from '../../protocol/grpc/metadata.js';
import { GrpcStatus, grpcStatusName } from '../../protocol/grpc/status.js';
import type { GrpcEnd, GrpcExchange } from './grpc-exchange.js';
import type { GrpcFormat } from './grpc-messages.js';

/** Connect's HTTP status for each gRPC status (its error codes are the gRPC names, lowercase). */
const HTTP_STATUS: Readonly<Record<number, number>> = {
  [GrpcStatus.CANCELLED]: 499,
  [GrpcStatus.UNKNOWN]: 500,
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.FAILED_PRECONDITION]: 400,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.INTERNAL]: 500,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DATA_LOSS]: 500,
  [GrpcStatus.UNAUTHENTICATED]: 401,
};

/** Connect's name of a gRPC status (its error codes are the gRPC names, lowercase; `canceled`). */
export const connectCode = (status: number): string =>
  status === GrpcStatus.CANCELLED ? 'canceled' : grpcStatusName(status).toLowerCase();

/** A Connect unary answer, written once: the one message sent, then `end`. */
export function createConnectExchange(
  stream: http2.ServerHttp2Stream,
  format: GrpcFormat,
  extraHeaders?: http2.OutgoingHttpHeaders,
): GrpcExchange {
  let message: Uint8Array | undefined;
  let ended = false;
  const gone = (): boolean => ended || stream.destroyed || stream.closed;
  const contentType = format === 'proto' ? 'application/proto' : 'application/json';
  return {
    stream,
    get started() {
      return ended;
    },
    get ended() {
      return gone();
    },
    start() {},
    send(payload) {
      message = payload;
      return true;
    },
    end(end: GrpcEnd) {
      if (gone()) return;
      ended = true;
      const trailers: http2.OutgoingHttpHeaders = {};
      addAttachmentHeaders(trailers, end.attachments);
      const headers: http2.OutgoingHttpHeaders = { ...extraHeaders };
      for (const [name, value] of Object.entries(trailers)) headers[`trailer-${name}`] = value;
      if (end.status === GrpcStatus.OK) {
        stream.respond({ ':status': 200, 'content-type': contentType, ...headers });
        stream.end(message ?? new Uint8Array(0));
        return;
      }
      const code = end.trailers?.['callisto-code'];
      stream.respond({
        ':status': HTTP_STATUS[end.status] ?? 500,
        'content-type': 'application/json',
        ...headers,
        ...(code === undefined ? {} : { 'callisto-code': code }),
      });
      stream.end(JSON.stringify({ code: connectCode(end.status), message: end.message ?? '' }));
    },
  };
}
