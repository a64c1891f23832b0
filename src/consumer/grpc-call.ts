/**
 * One call over a gRPC connection (grpc-connection.ts): one HTTP/2 stream, from its request headers to
 * the status in its trailers.
 *
 * - Request: `:path` and `content-type` of the method (grpc-codec.ts), `te: trailers`, the budget as
 *   `grpc-timeout` (and enforced here: at the deadline the stream is reset with CANCEL and the call
 *   fails Timeout), the call id as `callisto-call-id`, attachments as metadata (protocol/grpc/metadata.ts);
 *   a unary call or a server stream sends its arguments as one message and half-closes, a client or
 *   two-way stream sends the caller's input, one message per value, waiting for HTTP/2's flow control
 *   (`drain`) before the next, and half-closes at its end. Aborting the call's signal (a `break` out
 *   of a stream, the caller's own signal) resets the stream with CANCEL: the server sees it cancelled.
 * - Response: the response's metadata (headers and trailers, `grpc-*` left out) become the attempt's
 *   response attachments; each message is checked against the limit from its 5-byte prefix before
 *   it is buffered (protocol/grpc/message-frame.ts), inflated when compressed (`grpc-encoding: gzip`
 *   only, bounded by the same limit: a bomb stops there), measured, decoded; a server or two-way
 *   stream's messages go to the caller's inbox, the stream's reading paused while the caller is
 *   `INBOX_AHEAD` messages or a window's bytes behind (HTTP/2 flow control then holds the server).
 * - Status: `grpc-status` 0 is success (a unary or client-stream call must have had one message);
 *   another is the RpcError of `rpcCodeOf` (protocol/grpc/status.ts; `callisto-code` counts only when it
 *   agrees with the status), `remote`, with the decoded `grpc-message` as its message and
 *   `details.grpcStatus`/`details.grpcStatusName`. A response without a status is an HTTP status mapped
 *   as gRPC maps it (not remote: a proxy may have answered), or a reset or lost connection: Network,
 *   `neverSent` only when the connection proves it (`unsent`).
 */
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import http2 from 'node:http2';
import { messageOf, RpcError } from '../core/rpc-error.js';
import { CALL_ID_ATTACHMENT } from '../observability/call-id.js';
import {
  encodeGrpcMessage,
  FLAG_COMPRESSED,
  GRPC_PREFIX_BYTES,
  GrpcMessageDecoder,
  GrpcMessageTooLargeError,
} from '../protocol/grpc/message-frame.js';
import { addAttachmentHeaders } from '../protocol/grpc/metadata.js';
import { formatGrpcTimeout } from '../protocol/grpc/timeout.js';
import { InflateBoundError } from '../serialization/compression/compressor.js';
import { gzipCompressor } from '../serialization/compression/zlib-compressors.js';
import type { GrpcMethodCodec } from './grpc-codec.js';
import { pumpGrpcInput } from './grpc-input.js';
import { metadataOf, notGrpcResponse, resetError, statusError, statusOf } from './grpc-outcome.js';
import type { WireCall } from './pending-call.js';

const { NGHTTP2_CANCEL } = http2.constants;

/** Messages a stream's inbox may hold unread before the stream stops reading. */
export const INBOX_AHEAD = 16;

/** What a call needs of its connection. */
export interface GrpcCallInit {
  readonly call: WireCall;
  readonly session: ClientHttp2Session;
  readonly codec: GrpcMethodCodec;
  /** `grpc://host:port`, for messages. */
  readonly address: string;
  /** Largest message accepted or sent, bytes (the prefix excluded). */
  readonly maxMessageBytes: number;
  readonly maxDecodedElements: number;
  /** Bytes of unread messages a stream's inbox may hold before the stream stops reading. */
  readonly aheadBytes: number;
  /** Whether `stream` provably never reached the server's application (refused, above a GOAWAY, never opened). */
  unsent(stream: ClientHttp2Stream | undefined): boolean;
  /** Something arrived from the server. */
  heard(): void;
  /** A response was refused for what it carried. */
  refused(reason: string): void;
  /** The call ended (once). */
  ended(flight: GrpcFlight): void;
}

export interface GrpcFlight {
  readonly call: WireCall;
  /** Fails the call with `error` (when it has not ended) and resets its stream with CANCEL. */
  cancel(error: RpcError): void;
  /** The server sent GOAWAY letting streams up to `lastStreamId` through: a later one never ran. */
  goneAway(lastStreamId: number): void;
}

type Outcome = { readonly value: unknown } | { readonly error: RpcError };

/** Starts `init.call` on its session; how it ends is told to the call. */
export function startGrpcCall(init: GrpcCallInit): GrpcFlight {
  const { call, codec, address } = init;
  const label = call.route.label;
  const site = { label, address };
  const stream = call.stream;
  const inbox = stream?.inbox;
  let h2: ClientHttp2Stream | undefined;
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let responseHeaders: IncomingHttpHeaders | undefined;
  let trailers: IncomingHttpHeaders | undefined;
  let result: { value: unknown } | undefined;
  let failure: RpcError | undefined;
  let aheadBytes = 0;
  const decoder = new GrpcMessageDecoder(init.maxMessageBytes);

  const flight: GrpcFlight = {
    call,
    cancel(error) {
      finish({ error });
    },
    goneAway(lastStreamId) {
      const id = h2?.id;
      if (id !== undefined && id <= lastStreamId) return;
      finish({
        error: new RpcError(
          'Network',
          `${address} is going away and did not process ${label} (GOAWAY, last stream ${lastStreamId})`,
          { neverSent: true },
        ),
      });
    },
  };

  /** Ends the call once; resets the stream when it is still open. */
  const finish = (outcome: Outcome): void => {
    if (settled) return;
    settled = true;
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort !== undefined) call.signal?.removeEventListener('abort', onAbort);
    stream?.detach();
    if (h2 !== undefined && !h2.closed) h2.close(NGHTTP2_CANCEL);
    init.ended(flight);
    if ('error' in outcome) call.failed(startedOrNot(outcome.error));
    else call.answered(outcome.value);
  };

  /** A stream that delivered or sent a message is never sent again: its error says it started. */
  const startedOrNot = (error: RpcError): RpcError =>
    stream === undefined || stream.untouched
      ? error
      : new RpcError(error.code, error.message, {
          cause: error.cause,
          remote: error.remote,
          remoteName: error.remoteName,
          details: { ...error.details, started: true },
        });

  const network = (message: string, cause?: unknown): RpcError =>
    new RpcError('Network', message, { cause, neverSent: init.unsent(h2) });

  // --- the request --------------------------------------------------------------------------------
  let first: Uint8Array | undefined;
  try {
    if (stream !== undefined && stream.kind !== 'server' && call.args.some((arg) => arg != null)) {
      throw new TypeError(
        'a gRPC client or two-way stream carries no opening arguments: pass only the input stream',
      );
    }
    if (stream === undefined || stream.kind === 'server') first = codec.encodeArgs(call.args);
  } catch (error) {
    finish({
      error: new RpcError(
        'Serialization',
        `cannot encode the arguments of ${label} for gRPC: ${messageOf(error)}`,
        {
          cause: error,
          neverSent: true,
        },
      ),
    });
    return flight;
  }
  if (first !== undefined && first.length > init.maxMessageBytes) {
    finish({
      error: new RpcError(
        'Serialization',
        `the request of ${label} is ${first.length} bytes, over the limit of ${init.maxMessageBytes}`,
        { neverSent: true },
      ),
    });
    return flight;
  }
  const headers: Record<string, string> = {
    ':method': 'POST',
    ':path': codec.path,
    'content-type': codec.contentType,
    te: 'trailers',
    'grpc-accept-encoding': 'identity,gzip',
    'user-agent': 'callisto-grpc',
  };
  addAttachmentHeaders(headers, call.attachments);
  const timeoutMs = call.attempt.timeoutMs;
  if (timeoutMs > 0) headers['grpc-timeout'] = formatGrpcTimeout(timeoutMs);
  if (call.callId !== undefined) headers[CALL_ID_ATTACHMENT] = call.callId;
  try {
    h2 = init.session.request(headers, { endStream: false });
  } catch (error) {
    finish({
      error: new RpcError('Network', `cannot open a stream to ${address}: ${messageOf(error)}`, {
        cause: error,
        neverSent: true,
      }),
    });
    return flight;
  }
  const opened = h2;
  // given an id (submitted to the session) at once when the session is open, else once it opens
  if (!opened.pending) call.attempt.sent = true;
  else {
    opened.once('ready', () => {
      call.attempt.sent = true;
    });
  }
  if (first !== undefined) opened.end(encodeGrpcMessage(first));

  if (timeoutMs > 0) {
    timer = setTimeout(
      () =>
        finish({
          error: new RpcError('Timeout', `${label} timed out after ${timeoutMs} ms waiting for ${address}`),
        }),
      timeoutMs,
    );
  }
  if (call.signal !== undefined) {
    onAbort = () => {
      const reason: unknown = call.signal?.reason;
      const error =
        reason instanceof RpcError && reason.code === 'Cancelled'
          ? reason
          : new RpcError('Cancelled', `${label} was cancelled by the caller`, { cause: reason });
      finish({ error });
    };
    if (call.signal.aborted) {
      onAbort();
      return flight;
    }
    call.signal.addEventListener('abort', onAbort, { once: true });
  }

  // --- the response -------------------------------------------------------------------------------
  /** Fails the call for what the server sent; it is told (the pool logs it). */
  const refuse = (error: RpcError): void => {
    init.refused(`refused a response from ${address}: ${error.message}`);
    finish({ error });
  };

  const onMessage = (flags: number, data: Buffer): void => {
    let bytes = data;
    if ((flags & FLAG_COMPRESSED) !== 0) {
      const encoding = responseHeaders?.['grpc-encoding'];
      if (encoding !== 'gzip') {
        refuse(
          new RpcError(
            'Internal',
            `${label}: ${address} sent a message compressed with ${JSON.stringify(encoding ?? 'identity')}; this consumer reads gzip only`,
          ),
        );
        return;
      }
      try {
        bytes = gzipCompressor.decompress(data, init.maxMessageBytes) as Buffer;
      } catch (error) {
        refuse(
          new RpcError(
            'Serialization',
            error instanceof InflateBoundError
              ? `a gzip message of ${label} from ${address} (${data.length} bytes) inflates past the consumer's limit of ${init.maxMessageBytes} bytes`
              : `a gzip message of ${label} from ${address} cannot be inflated: ${messageOf(error)}`,
            { cause: error },
          ),
        );
        return;
      }
    }
    let value: unknown;
    try {
      value = codec.decodeMessage(bytes, init.maxDecodedElements);
    } catch (error) {
      refuse(
        new RpcError(
          'Serialization',
          `cannot decode a message of ${label} from ${address}: ${messageOf(error)}`,
          {
            cause: error,
          },
        ),
      );
      return;
    }
    if (inbox === undefined) {
      if (result !== undefined) {
        refuse(new RpcError('Internal', `${label}: ${address} sent more than one response message`));
        return;
      }
      result = { value };
      return;
    }
    const size = GRPC_PREFIX_BYTES + data.length;
    aheadBytes += size;
    inbox.push(value, size);
    if (inbox.queued >= INBOX_AHEAD || aheadBytes >= init.aheadBytes) opened.pause();
  };

  stream?.attach((bytes) => {
    aheadBytes -= bytes;
    if (
      opened.isPaused() &&
      inbox !== undefined &&
      inbox.queued < INBOX_AHEAD / 2 &&
      aheadBytes < init.aheadBytes / 2
    ) {
      opened.resume();
    }
  });

  opened.on('response', (received) => {
    init.heard();
    responseHeaders = received;
    call.attempt.responseAttachments = metadataOf(received, undefined);
    if (received['grpc-status'] !== undefined) {
      trailers = received; // trailers-only
      return;
    }
    // not a gRPC response (a proxy's error page, a server that is not gRPC): its body is not read
    const notGrpc = notGrpcResponse(received, site);
    if (notGrpc !== undefined) finish({ error: notGrpc });
  });
  opened.on('data', (chunk: Buffer) => {
    init.heard();
    if (settled) return;
    let messages: ReturnType<GrpcMessageDecoder['push']>;
    try {
      messages = decoder.push(chunk);
    } catch (error) {
      const limit = error instanceof GrpcMessageTooLargeError;
      refuse(
        new RpcError(
          'Serialization',
          limit
            ? `a message of ${label} from ${address} is ${error.length} bytes, over the consumer's limit of ${error.maxMessageBytes} bytes`
            : `bad message framing from ${address}: ${messageOf(error)}`,
          { cause: error, details: limit ? { limit: 'maxMessageBytes' } : {} },
        ),
      );
      return;
    }
    for (const message of messages) {
      onMessage(message.flags, message.data);
      if (settled) return;
    }
  });
  opened.on('trailers', (received) => {
    init.heard();
    trailers = received;
    call.attempt.responseAttachments = metadataOf(responseHeaders, received);
  });
  opened.on('error', (error) => {
    failure ??= network(`the stream of ${label} to ${address} failed: ${messageOf(error)}`, error);
  });
  opened.on('close', () => {
    if (settled) return;
    finish(outcomeAtClose());
  });
  if (stream?.input !== undefined) {
    void pumpGrpcInput({
      stream,
      h2: opened,
      codec,
      maxMessageBytes: init.maxMessageBytes,
      label,
      ended: () => settled,
      fail: (error) => finish({ error }),
    });
  }

  function outcomeAtClose(): Outcome {
    const status = statusOf(trailers);
    if (status === undefined) {
      return { error: resetError(opened.rstCode ?? 0, failure, site, (message) => network(message)) };
    }
    if (status !== 0) return { error: statusError(status, trailers!, site) };
    if (!decoder.atBoundary) {
      return { error: new RpcError('Internal', `${label}: ${address} ended the response inside a message`) };
    }
    if (inbox !== undefined) return { value: undefined };
    if (result === undefined) {
      return {
        error: new RpcError('Internal', `${label}: ${address} answered OK without a response message`),
      };
    }
    return result;
  }

  return flight;
}
