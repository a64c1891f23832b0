/**
 * The Connect protocol's streams (connectrpc.com/docs/protocol, "Streaming-Request") on the gRPC
 * entry, over HTTP/2: `content-type: application/connect+proto` (a service declared with protobuf) or
 * `application/connect+json` (the JSON arrays of the arguments, as on `application/grpc+json`), the
 * same length-prefixed messages as gRPC both ways (compressed with `connect-content-encoding: gzip`),
 * `connect-timeout-ms` as the deadline. Server, client and two-way streams (a unary method called this
 * way too). The answer is HTTP 200 with the messages, then an end-of-stream message (flag bit 1) whose
 * body is JSON: `{}` for a clean end, `{"error": {"code", "message"}}` otherwise (Connect's names of the
 * gRPC status table), with the response attachments and Callisto's code as `metadata`. Everything else
 * is the gRPC entry's: this file only writes the answer.
 */
import type http2 from 'node:http2';
import { encodeGrpcMessage, FLAG_CONNECT_END_STREAM } from '../../protocol/grpc/message-frame.js';
import { addAttachmentHeaders } from '../../protocol/grpc/metadata.js';
import { GrpcStatus } from '../../protocol/grpc/status.js';
import { connectCode } from './connect-unary.js';
import { createEnvelopedExchange } from './enveloped-exchange.js';
import type { GrpcEnd, GrpcExchange } from './grpc-exchange.js';
import type { GrpcFormat } from './grpc-messages.js';

/** The end-of-stream message's JSON body. */
function endOfStream(end: GrpcEnd): Buffer {
  const headers: http2.OutgoingHttpHeaders = {};
  addAttachmentHeaders(headers, end.attachments);
  const code = end.trailers?.['callisto-code'];
  if (code !== undefined) headers['callisto-code'] = code;
  const metadata: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) metadata[name] = (Array.isArray(value) ? value : [value]).map(String);
  }
  const body: Record<string, unknown> = {};
  if (end.status !== GrpcStatus.OK) {
    body['error'] = { code: connectCode(end.status), message: (end.message ?? '').slice(0, 4096) };
  }
  if (Object.keys(metadata).length > 0) body['metadata'] = metadata;
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/** The answer on `stream`: headers, the messages, then the end as its last message. */
export function createConnectStreamExchange(
  stream: http2.ServerHttp2Stream,
  format: GrpcFormat,
  extraHeaders?: http2.OutgoingHttpHeaders,
): GrpcExchange {
  return createEnvelopedExchange({
    stream,
    headers: {
      ...extraHeaders,
      ':status': 200,
      'content-type': format === 'proto' ? 'application/connect+proto' : 'application/connect+json',
      'connect-accept-encoding': 'identity,gzip',
    },
    endMessage: (end) => encodeGrpcMessage(endOfStream(end), FLAG_CONNECT_END_STREAM),
  });
}
