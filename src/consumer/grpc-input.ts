/**
 * The caller's input of a gRPC client or two-way stream (grpc-call.ts), written to its HTTP/2 stream:
 * one length-prefixed message per value, the next one only once the stream takes more (`drain`: HTTP/2
 * flow control is the backpressure), a half-close at the input's end. A value that cannot be encoded, a
 * message over the limit or an input that throws cancels the call; the input's iterator is returned
 * (its `finally` runs) whenever the call ends first.
 */
import type { ClientHttp2Stream } from 'node:http2';
import { messageOf, RpcError } from '../core/rpc-error.js';
import { encodeGrpcMessage } from '../protocol/grpc/message-frame.js';
import type { ClientStream } from './client-stream.js';
import type { GrpcMethodCodec } from './grpc-codec.js';

export interface GrpcInput {
  readonly stream: ClientStream;
  readonly h2: ClientHttp2Stream;
  readonly codec: GrpcMethodCodec;
  readonly maxMessageBytes: number;
  readonly label: string;
  /** Whether the call ended (nothing more is sent). */
  ended(): boolean;
  /** Ends the call with `error`. */
  fail(error: RpcError): void;
}

export async function pumpGrpcInput(input: GrpcInput): Promise<void> {
  const { stream, h2, codec } = input;
  const iterator = stream.input![Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const step = await iterator.next();
      if (input.ended()) break;
      if (step.done === true) {
        done = true;
        h2.end();
        return;
      }
      const body = codec.encodeMessage(step.value);
      if (body.length > input.maxMessageBytes) {
        throw new Error(`a message of ${body.length} bytes is over the limit of ${input.maxMessageBytes}`);
      }
      const room = h2.write(encodeGrpcMessage(body));
      stream.sent++;
      if (!room) await drained(h2);
      if (input.ended()) break;
    }
  } catch (error) {
    done = true;
    if (!input.ended()) {
      input.fail(
        new RpcError('Cancelled', `the input of ${input.label} failed: ${messageOf(error)}`, {
          cause: error,
        }),
      );
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}

/** Resolves once `stream` can take more (or is gone). */
function drained(stream: ClientHttp2Stream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
