/**
 * gRPC-Web on the gRPC entry (the gRPC-Web protocol, github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md):
 * `content-type: application/grpc-web`, `application/grpc-web+proto` or `application/grpc-web+json`,
 * over HTTP/2 (h2c or TLS). The request is read as a gRPC one (the same length-prefixed messages, the
 * same `grpc-timeout`, metadata and routing); the answer differs in one thing only: its status and
 * trailers travel as a last length-prefixed message whose flag has bit 7 set, its body the trailers as
 * HTTP/1 header lines (`grpc-status: 0\r\n…`), since browsers cannot read HTTP trailers. Unary calls and
 * every stream kind (over HTTP/2 a gRPC-Web client can send client streams too);
 * `application/grpc-web-text` (base64) is not served.
 * Answers are not compressed (a client may send gzip-compressed messages).
 */
import type http2 from 'node:http2';
import { encodeGrpcMessage, FLAG_GRPC_WEB_TRAILERS } from '../../protocol/grpc/message-frame.js';
import { addAttachmentHeaders } from '../../protocol/grpc/metadata.js';
import { encodeStatusMessage } from '../../protocol/grpc/status-message.js';
import { createEnvelopedExchange } from './enveloped-exchange.js';
import type { GrpcEnd, GrpcExchange } from './grpc-exchange.js';
import type { GrpcFormat } from './grpc-messages.js';

/** The trailers message's body: `name: value\r\n` per trailer, status first. */
function trailerLines(end: GrpcEnd): Buffer {
  const trailers: http2.OutgoingHttpHeaders = {};
  addAttachmentHeaders(trailers, end.attachments);
  Object.assign(trailers, end.trailers);
  let text = `grpc-status: ${end.status}\r\n`;
  if (end.message) text += `grpc-message: ${encodeStatusMessage(end.message.slice(0, 4096))}\r\n`;
  for (const [name, value] of Object.entries(trailers)) {
    if (name === 'grpc-status' || name === 'grpc-message' || value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) text += `${name}: ${one}\r\n`;
  }
  return Buffer.from(text, 'latin1');
}

/** The answer on `stream`: headers, the messages, then the end as its last message. */
export function createGrpcWebExchange(
  stream: http2.ServerHttp2Stream,
  format: GrpcFormat,
  extraHeaders?: http2.OutgoingHttpHeaders,
): GrpcExchange {
  return createEnvelopedExchange({
    stream,
    headers: {
      ...extraHeaders,
      ':status': 200,
      'content-type': format === 'proto' ? 'application/grpc-web+proto' : 'application/grpc-web+json',
      'grpc-accept-encoding': 'identity,gzip',
    },
    endMessage: (end) => encodeGrpcMessage(trailerLines(end), FLAG_GRPC_WEB_TRAILERS),
  });
}
