/**
 * A gRPC (or Connect) request's body as the entry reads it, and its headers' size: length-prefixed
 * messages, each length checked against `maxMessageBytes` from its 5-byte prefix before a byte of the
 * message is buffered and a gzip message inflated to at most that many bytes (readMessages), or a
 * Connect unary call's one bare message within the same bound (readBody). A failure stops reading.
 */
import type http2 from 'node:http2';
import zlib from 'node:zlib';
import { messageOf, RpcError } from '../../core/rpc-error.js';
import {
  FLAG_COMPRESSED,
  type GrpcMessage,
  GrpcMessageDecoder,
  GrpcMessageTooLargeError,
} from '../../protocol/grpc/message-frame.js';

const NO_ERROR = 0;

/** A header list's size as HTTP/2 counts it (RFC 7541 §4.1: name, value and 32 bytes per field). */
export function headerListBytes(headers: http2.IncomingHttpHeaders): number {
  let bytes = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) bytes += name.length + String(one).length + 32;
  }
  return bytes;
}

/** `connect-timeout-ms`: up to 10 digits of milliseconds. */
export function parseConnectTimeout(value: string | undefined): number | undefined | Error {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) {
    return new Error(`connect-timeout-ms ${JSON.stringify(value.slice(0, 20))} is not 1-10 digits`);
  }
  return Number(value);
}

/** A Connect unary request's body: one bare message, at most `maxMessageBytes`. */
export function readBody(
  limits: { readonly maxMessageBytes: number },
  stream: http2.ServerHttp2Stream,
  onRefused: (reason: string) => void,
): Reading {
  const { maxMessageBytes } = limits;
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

export interface Reading {
  onMessage(listener: (bytes: Buffer) => void): void;
  onEnd(listener: () => void): void;
  onFailure(listener: (error: RpcError) => void): void;
}

/**
 * Reads the request's messages: each length checked from its prefix, inflated within
 * `maxMessageBytes` when compressed. A failure stops reading.
 */
export function readMessages(
  limits: { readonly maxMessageBytes: number },
  stream: http2.ServerHttp2Stream,
  gzip: boolean,
  onRefused: (reason: string) => void,
): Reading {
  const { maxMessageBytes } = limits;
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
