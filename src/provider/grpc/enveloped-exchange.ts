/**
 * The answer of the protocols that end a call with a message rather than HTTP trailers — gRPC-Web
 * (grpc-web.ts) and Connect's streams (connect-stream.ts): the response headers once, the
 * length-prefixed messages, then the last message their protocol writes for the call's end, and the
 * stream's end. Every write after the end, or after the client went away, is dropped.
 */
import type http2 from 'node:http2';
import { encodeGrpcMessage } from '../../protocol/grpc/message-frame.js';
import type { GrpcEnd, GrpcExchange } from './grpc-exchange.js';

export interface EnvelopedExchangeInit {
  readonly stream: http2.ServerHttp2Stream;
  /** The response headers (`:status` 200 and the protocol's content type). */
  readonly headers: http2.OutgoingHttpHeaders;
  /** The last message, prefix and flag included, for the call's end. */
  readonly endMessage: (end: GrpcEnd) => Buffer;
}

/** No `date` header (as the gRPC answers; node:http2 formats one per response otherwise). */
const RESPOND: http2.ServerStreamResponseOptions = Object.freeze({ endStream: false, sendDate: false });

export function createEnvelopedExchange(init: EnvelopedExchangeInit): GrpcExchange {
  const { stream, headers, endMessage } = init;
  let started = false;
  let ended = false;
  const gone = (): boolean => ended || stream.destroyed || stream.closed;
  const start = (): void => {
    if (started || gone()) return;
    started = true;
    stream.respond(headers, RESPOND);
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
      return stream.write(encodeGrpcMessage(payload));
    },
    end(end) {
      if (gone()) return;
      start();
      ended = true;
      stream.end(endMessage(end));
    },
  };
}
