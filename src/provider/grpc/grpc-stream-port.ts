/**
 * The provider's handle on one gRPC stream (provider/stream-port.ts), over one HTTP/2 stream:
 *
 * - the consumer's messages (client and two-way streams) go into an inbox the handler iterates; when
 *   `INBOX_HIGH` messages wait unread the HTTP/2 stream is paused, so node stops returning flow-control
 *   credit and the client stops sending (HTTP/2's own per-stream window is the backpressure);
 * - `drive()` writes what the handler yields, pulling the next message only when the HTTP/2 stream took
 *   the last one (`write()` true, or after 'drain': its window and buffer had room). A client that takes
 *   nothing for `stalledStreamTimeoutMs` gets its stream reset, and the handler is stopped.
 */
import http2 from 'node:http2';
import { messageOf, RpcError } from '../../core/rpc-error.js';
import { StreamInbox } from '../../protocol/stream-inbox.js';
import type { StreamKind } from '../../service/define-service.js';
import type { StreamPort } from '../stream-port.js';
import { StreamPull } from '../stream-pull.js';
import type { GrpcExchange } from './grpc-exchange.js';
import type { GrpcMessages } from './grpc-messages.js';

/** Messages waiting unread in the inbox before the HTTP/2 stream is paused. */
const INBOX_HIGH = 8;

export interface GrpcStreamPort extends StreamPort {
  /** A message of the consumer's stream arrived (decoded here: a failure fails the stream). */
  received(bytes: Uint8Array): void;
  /** The consumer ended its side (END_STREAM). */
  inputEnded(): void;
  /** The consumer's side failed (a message over the limit, malformed framing). */
  inputFailed(error: RpcError): void;
}

export interface GrpcStreamPortInit {
  readonly kind: StreamKind;
  readonly exchange: GrpcExchange;
  readonly messages: GrpcMessages;
  readonly stalledStreamTimeoutMs: number;
  /** The client took nothing for too long: the stream was reset (logged by the entry, naming the peer). */
  onStalled(): void;
}

export function createGrpcStreamPort(init: GrpcStreamPortInit): GrpcStreamPort {
  const { kind, exchange, messages } = init;
  const http = exchange.stream;
  let stopped: RpcError | undefined;
  let iterator: AsyncIterator<unknown> | undefined;
  let pull: StreamPull | undefined;
  const inbox =
    kind === 'server'
      ? undefined
      : new StreamInbox({
          consumed: () => {
            if (inbox!.queued < INBOX_HIGH && http.isPaused()) http.resume();
          },
          abandoned: () => {},
        });

  /** Resolves once the HTTP/2 stream took what was written ('drain'), or the stream stopped or stalled. */
  /** Ends the wait of `drained()` when the stream is stopped. */
  let wakeDrained: (() => void) | undefined;
  const drained = (): Promise<unknown> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        wakeDrained = undefined;
        clearTimeout(timer);
        http.off('drain', done);
        http.off('close', done);
        resolve();
      };
      const timer = setTimeout(() => {
        init.onStalled();
        stop(new RpcError('Cancelled', "the gRPC client took none of the stream's messages in time"));
        // its trailers would wait behind the messages it does not take: the stream is reset instead
        if (!http.destroyed) http.close(http2.constants.NGHTTP2_CANCEL);
        done();
      }, init.stalledStreamTimeoutMs);
      timer.unref();
      http.once('drain', done);
      http.once('close', done);
      wakeDrained = done;
    });

  const stop = (reason: RpcError): void => {
    if (stopped !== undefined) return;
    stopped = reason;
    pull?.stop();
    wakeDrained?.();
    inbox?.fail(reason);
    void iterator?.return?.()?.catch?.(() => {});
  };

  return {
    id: http.id ?? 0,
    kind,
    input: inbox,
    received(bytes) {
      if (inbox === undefined || !inbox.open) return;
      let value: unknown;
      try {
        value = messages.decodeInput(bytes);
      } catch (error) {
        inbox.fail(new RpcError('Serialization', `cannot decode a stream message: ${messageOf(error)}`));
        return;
      }
      inbox.push(value, bytes.length);
      if (inbox.queued >= INBOX_HIGH) http.pause();
    },
    inputEnded() {
      inbox?.end();
    },
    inputFailed(error) {
      inbox?.fail(error);
    },
    async drive(source, label) {
      const iterable = source as AsyncIterable<unknown> | null | undefined;
      if (typeof iterable?.[Symbol.asyncIterator] !== 'function') {
        throw new RpcError('Internal', `${label} is a ${kind} stream but returned no AsyncIterable`);
      }
      iterator = iterable[Symbol.asyncIterator]();
      if (stopped !== undefined) {
        await iterator.return?.();
        throw stopped;
      }
      exchange.start();
      const steps = new StreamPull(iterator);
      pull = steps;
      let finished = false;
      try {
        for (;;) {
          if (stopped !== undefined) break;
          const step = await steps.next();
          if (step === undefined) break;
          if (step.done === true) {
            finished = true;
            break;
          }
          if (stopped !== undefined || exchange.ended) break;
          let payload: Uint8Array;
          try {
            payload = messages.encodeOutput(step.value);
          } catch (error) {
            throw new RpcError('Internal', `cannot encode a message of ${label}: ${messageOf(error)}`);
          }
          // false: the HTTP/2 stream's window or buffer is full; the next message waits for 'drain'
          if (!exchange.send(payload)) await drained();
        }
      } catch (error) {
        finished = true;
        throw error;
      } finally {
        if (!finished && stopped === undefined) await iterator.return?.();
      }
      if (stopped !== undefined) throw stopped;
    },
    stop,
  };
}
