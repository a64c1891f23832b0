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
    if (typeof value === 'string') bytes += name.length + value.length + 32;
    else if (Array.isArray(value)) for (const one of value) bytes += name.length + String(one).length + 32;
    else bytes += name.length + String(value).length + 32;
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

/** Where a request's messages go as they are read: the entry's call, without closures of its own. */
export interface ReadingSink {
  /** One whole message (inflated). */
  message(bytes: Buffer): void;
  /** The client ended its side between messages. */
  end(): void;
  /** Reading stopped on `error` (already logged through the reader's `onRefused`). */
  failed(error: RpcError): void;
}

const READER = Symbol('callisto.grpcReader');
type ReadStream = http2.ServerHttp2Stream & { [READER]?: MessageReader };

/** The stream listeners, one function each for every stream: the reader is on the stream. */
function onReaderData(this: ReadStream, chunk: Buffer): void {
  this[READER]?.data(chunk);
}
function onReaderEnd(this: ReadStream): void {
  this[READER]?.ended(this);
}

/** The Reading API over a sink that calls listeners (built-in services, Connect). */
class ListenerSink implements ReadingSink, Reading {
  readonly #messageListeners: Array<(bytes: Buffer) => void> = [];
  #endListener: (() => void) | undefined;
  #failureListener: ((error: RpcError) => void) | undefined;
  message(bytes: Buffer): void {
    for (const listener of this.#messageListeners) listener(bytes);
  }
  end(): void {
    this.#endListener?.();
  }
  failed(error: RpcError): void {
    this.#failureListener?.(error);
  }
  onMessage(listener: (bytes: Buffer) => void): void {
    this.#messageListeners.push(listener);
  }
  onEnd(listener: () => void): void {
    this.#endListener = listener;
  }
  onFailure(listener: (error: RpcError) => void): void {
    this.#failureListener = listener;
  }
}

export interface MessageReaderInit {
  readonly maxMessageBytes: number;
  readonly gzip: boolean;
  /** A request refused for what it sent: logged, naming the peer. */
  onRefused(remote: string, reason: string): void;
  readonly remote: string;
  readonly sink: ReadingSink;
}

class MessageReader {
  readonly #init: MessageReaderInit;
  readonly #decoder: GrpcMessageDecoder;
  #failed = false;

  constructor(init: MessageReaderInit) {
    this.#init = init;
    this.#decoder = new GrpcMessageDecoder(init.maxMessageBytes);
  }

  fail(error: RpcError): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#init.onRefused(this.#init.remote, error.message);
    this.#init.sink.failed(error);
  }

  #inflate(message: GrpcMessage): Buffer | undefined {
    if ((message.flags & FLAG_COMPRESSED) === 0) return message.data;
    const { gzip, maxMessageBytes } = this.#init;
    if (!gzip) {
      this.fail(new RpcError('Internal', 'a compressed message without grpc-encoding'));
      return undefined;
    }
    try {
      return zlib.gunzipSync(message.data, { maxOutputLength: maxMessageBytes });
    } catch (error) {
      const tooLarge =
        (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError;
      this.fail(
        tooLarge
          ? new RpcError(
              'RateLimited',
              `a gzip message inflates past server.grpc.maxMessageBytes (${maxMessageBytes})`,
            )
          : new RpcError('Serialization', `a gzip message does not inflate: ${messageOf(error)}`),
      );
      return undefined;
    }
  }

  data(chunk: Buffer): void {
    if (this.#failed) return;
    let messages: GrpcMessage[];
    try {
      messages = this.#decoder.push(chunk);
    } catch (error) {
      if (error instanceof GrpcMessageTooLargeError) {
        this.fail(
          new RpcError(
            'RateLimited',
            `a message of ${error.length} bytes is over server.grpc.maxMessageBytes (${this.#init.maxMessageBytes})`,
          ),
        );
      } else this.fail(new RpcError('BadRequest', messageOf(error)));
      return;
    }
    for (const message of messages) {
      const bytes = this.#inflate(message);
      if (bytes === undefined) return;
      this.#init.sink.message(bytes);
      if (this.#failed) return;
    }
  }

  ended(stream: http2.ServerHttp2Stream): void {
    // a stream the client reset ends too: there is nobody to answer
    if (this.#failed || stream.aborted || (stream.rstCode ?? NO_ERROR) !== NO_ERROR) return;
    if (!this.#decoder.atBoundary) {
      this.fail(new RpcError('BadRequest', 'the request ended inside a message'));
      return;
    }
    this.#init.sink.end();
  }
}

/**
 * Reads the request's messages into `init.sink`: each length checked from its prefix, inflated within
 * `maxMessageBytes` when compressed. A failure stops reading.
 */
export function readMessagesInto(stream: http2.ServerHttp2Stream, init: MessageReaderInit): void {
  (stream as ReadStream)[READER] = new MessageReader(init);
  stream.on('data', onReaderData);
  stream.on('end', onReaderEnd);
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
  const sink = new ListenerSink();
  readMessagesInto(stream, {
    maxMessageBytes: limits.maxMessageBytes,
    gzip,
    remote: '',
    onRefused: (_remote, reason) => onRefused(reason),
    sink,
  });
  return sink;
}
