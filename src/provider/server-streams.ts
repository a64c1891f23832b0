/**
 * The streams of one server connection (docs/protocol.md, "Streams"): opening within the connection's
 * limit, the consumer's messages into each stream's inbox within the receive windows (credit returned
 * as the handler reads), the handler's messages out within the send windows, and the peer's protocol
 * violations (a message for a stream never opened, beyond its window, or a window that would overflow),
 * which close the connection. A message or window update for a stream that already ended (the consumer
 * could not know yet) is dropped, its connection credit returned.
 */
import { IdTable } from '../core/id-table.js';
import { messageOf, RpcError } from '../core/rpc-error.js';
import type { StreamMeter } from '../core/stream-meter.js';
import type { StreamOptions } from '../protocol/connection-options.js';
import { type Frame, FrameKind, HEADER_BYTES } from '../protocol/frame.js';
import type { FrameWriter } from '../protocol/frame-writer.js';
import { ProtocolError } from '../protocol/protocol-error.js';
import {
  applyWindowUpdate,
  INITIAL_CONNECTION_WINDOW_BYTES,
  INITIAL_STREAM_WINDOW_BYTES,
  nextTurn,
  ReceiveWindow,
  SEND_SLICE_BYTES,
  SendWindow,
  type WindowUpdateTarget,
} from '../protocol/stream-flow.js';
import { StreamInbox } from '../protocol/stream-inbox.js';
import type { Serializer } from '../serialization/serializer.js';
import type { StreamKind } from '../service/define-service.js';
import type { StreamPort } from './stream-port.js';
import { StreamPull } from './stream-pull.js';

export interface ServerStreams {
  /** Streams open now. */
  readonly size: number;
  /** Opens stream `id`; an RpcError (Overloaded) when the connection has its limit open. */
  open(id: number, kind: StreamKind, serializer: Serializer, deadline: number): StreamPort | RpcError;
  /** A stream message, stream end or window update frame. */
  onFrame(frame: Frame): void;
  /** A request asked to open stream `id` (whether or not it is refused): frames for it are not foreign. */
  seen(id: number): void;
  /** The stream ended (answered): forget it. */
  release(id: number): void;
  /** Stops every stream (the connection closed). */
  stopAll(reason: RpcError): void;
}

export interface ServerStreamsInit {
  readonly writer: FrameWriter;
  readonly options: StreamOptions;
  /** Streams open on every connection of the server, and their limit (`server.maxOpenStreams`). */
  readonly shared: { open: number };
  readonly maxOpenStreams: number;
  /** The consumer broke the protocol: the connection is closed. */
  onViolation(error: ProtocolError): void;
}

export function createServerStreams(init: ServerStreamsInit): ServerStreams {
  const { writer, options, onViolation, shared, maxOpenStreams } = init;
  const streams = new IdTable<WireStream>();
  const sendWindow = new SendWindow(INITIAL_CONNECTION_WINDOW_BYTES);
  const receiveWindow = new ReceiveWindow(INITIAL_CONNECTION_WINDOW_BYTES, options.connectionWindowBytes);
  let granted = false;
  /** The highest stream id opened: a frame for a higher one is for a stream never opened. */
  let highest = 0;

  const returnConnectionCredit = (bytes: number): void => {
    const grant = receiveWindow.consumed(bytes);
    if (grant > 0) writer.windowUpdate(0, grant);
  };

  const violation = (message: string): void => onViolation(new ProtocolError(message));

  const onMessage = (frame: Frame): void => {
    const bytes = HEADER_BYTES + frame.meta.length + frame.body.length;
    if (!receiveWindow.receive(bytes)) {
      violation(`a stream message of ${bytes} bytes beyond the connection's window`);
      return;
    }
    const stream = streams.get(frame.requestId);
    if (stream === undefined) {
      if (frame.requestId > highest)
        violation(`a stream message for stream ${frame.requestId}, never opened`);
      else returnConnectionCredit(bytes);
      return;
    }
    stream.received(frame, bytes);
  };

  const windowTarget: WindowUpdateTarget = {
    connection: sendWindow,
    streamWindow: (id) => streams.get(id)?.send,
    get highest() {
      return highest;
    },
    violation,
  };
  const onWindowUpdate = (frame: Frame): void => applyWindowUpdate(frame.requestId, frame.body, windowTarget);

  class WireStream implements StreamPort {
    readonly send = new SendWindow(INITIAL_STREAM_WINDOW_BYTES);
    readonly receive = new ReceiveWindow(INITIAL_STREAM_WINDOW_BYTES, options.windowBytes);
    readonly inbox: StreamInbox | undefined;
    #stopped: RpcError | undefined;
    /** The handler's messages, pulled so that a stop interrupts a pull in progress. */
    #pull: StreamPull | undefined;
    #iterator: AsyncIterator<unknown> | undefined;
    /** Told each message sent (the invocation's meter). */
    #meter: StreamMeter | undefined;
    #idle: NodeJS.Timeout | undefined;
    #deadline: NodeJS.Timeout | undefined;

    constructor(
      readonly id: number,
      readonly kind: StreamKind,
      readonly serializer: Serializer,
      deadline: number,
    ) {
      if (deadline > 0) {
        this.#deadline = setTimeout(
          () => this.stop(new RpcError('Timeout', `stream ${id}: the caller's deadline passed`)),
          Math.max(0, deadline - Date.now()),
        );
        this.#deadline.unref();
      }
      this.inbox =
        kind === 'server'
          ? undefined
          : new StreamInbox({
              consumed: (bytes) => {
                returnConnectionCredit(bytes);
                const grant = this.receive.consumed(bytes);
                if (grant > 0 && streams.has(id)) writer.windowUpdate(id, grant);
              },
              abandoned: () => {},
            });
      const initial = this.receive.takeInitialGrant();
      if (initial > 0 && this.inbox !== undefined) writer.windowUpdate(id, initial);
      this.touch();
    }

    get input(): AsyncIterable<unknown> | undefined {
      return this.inbox;
    }

    /** Restarts the idle timer (a message either way). */
    touch(): void {
      if (options.idleTimeoutMs <= 0) return;
      if (this.#idle !== undefined) this.#idle.refresh();
      else {
        this.#idle = setTimeout(
          () =>
            this.stop(
              new RpcError('Timeout', `stream ${this.id}: no message for ${options.idleTimeoutMs} ms`),
            ),
          options.idleTimeoutMs,
        );
        this.#idle.unref();
      }
    }

    received(frame: Frame, bytes: number): void {
      const inbox = this.inbox;
      if (inbox === undefined) {
        violation(`a stream message for server stream ${this.id}, which takes none`);
        return;
      }
      if (!this.receive.receive(bytes)) {
        violation(`a stream message of ${bytes} bytes beyond stream ${this.id}'s window`);
        return;
      }
      this.touch();
      if (!inbox.open) {
        // after the handler stopped reading: drop it, credit back
        returnConnectionCredit(bytes);
        return;
      }
      if (bytes > options.maxMessageBytes) {
        const error = new RpcError(
          'BadRequest',
          `a stream message of ${bytes} bytes is larger than maxStreamMessageBytes (${options.maxMessageBytes})`,
        );
        returnConnectionCredit(bytes);
        inbox.fail(error);
        this.stop(error);
        return;
      }
      let value: unknown;
      try {
        value = this.serializer.decode(frame.body);
      } catch (error) {
        returnConnectionCredit(bytes);
        inbox.fail(new RpcError('Serialization', `cannot decode a stream message: ${messageOf(error)}`));
        return;
      }
      inbox.push(value, bytes);
    }

    async drive(source: unknown, label: string): Promise<void> {
      const iterable = source as AsyncIterable<unknown> | null | undefined;
      if (typeof iterable?.[Symbol.asyncIterator] !== 'function') {
        throw new RpcError('Internal', `${label} is a ${this.kind} stream but returned no AsyncIterable`);
      }
      const iterator = iterable[Symbol.asyncIterator]();
      this.#iterator = iterator;
      const pull = new StreamPull(iterator);
      this.#pull = pull;
      const serializer = this.serializer;
      let finished = false;
      /** Bytes written since the event loop last turned. */
      let sliced = 0;
      try {
        for (;;) {
          if (this.#stopped !== undefined) break;
          // a stop does not wait for a handler busy in an await: the stream answers at once
          const step = await pull.next();
          if (step === undefined) break;
          if (step.done === true) {
            finished = true;
            break;
          }
          if (this.#stopped !== undefined) break;
          let body: Uint8Array;
          try {
            body = serializer.encode(step.value);
          } catch (error) {
            throw new RpcError('Internal', `cannot encode a message of ${label}: ${messageOf(error)}`);
          }
          if (HEADER_BYTES + body.length > options.maxMessageBytes) {
            throw new RpcError(
              'Internal',
              `a message of ${label} (${HEADER_BYTES + body.length} bytes) is larger than maxStreamMessageBytes (${options.maxMessageBytes})`,
            );
          }
          while (this.#stopped === undefined && !(this.send.open && sendWindow.open)) {
            await (this.send.open ? sendWindow.wait() : this.send.wait());
          }
          if (this.#stopped !== undefined) break;
          const bytes = writer.streamMessage(this.id, serializer.id, body);
          this.send.spend(bytes);
          sendWindow.spend(bytes);
          this.touch();
          this.#meter?.counted('out', step.value);
          sliced += bytes;
          if (sliced >= SEND_SLICE_BYTES) {
            // the reader starts on this slice, and its window updates are read, while the next is made
            sliced = 0;
            writer.flush();
            await pull.until(nextTurn());
          }
        }
      } catch (error) {
        finished = true;
        throw error;
      } finally {
        // stopped: stop() asked the handler to return already; the answer does not wait for it
        if (!finished && this.#stopped === undefined) await iterator.return?.();
      }
      if (this.#stopped !== undefined) throw this.#stopped;
    }

    countSentWith(meter: StreamMeter): void {
      this.#meter = meter;
    }

    stop(reason: RpcError): void {
      if (this.#stopped !== undefined) return;
      this.#stopped = reason;
      this.#pull?.stop();
      this.clear();
      this.inbox?.fail(reason);
      this.send.wakeAll();
      sendWindow.wakeAll();
      // a handler suspended at a `yield` ends now (one busy in an await ends at its next yield)
      void this.#iterator?.return?.()?.catch?.(() => {});
    }

    clear(): void {
      if (this.#deadline !== undefined) clearTimeout(this.#deadline);
      this.#deadline = undefined;
      if (this.#idle !== undefined) clearTimeout(this.#idle);
      this.#idle = undefined;
    }
  }

  return {
    get size() {
      return streams.size;
    },
    open(id, kind, serializer, deadline) {
      if (streams.size >= options.maxStreamsPerConnection) {
        return new RpcError(
          'Overloaded',
          `this connection has ${streams.size} streams open, its limit (maxStreamsPerConnection ${options.maxStreamsPerConnection})`,
          { neverSent: true },
        );
      }
      if (shared.open >= maxOpenStreams) {
        return new RpcError(
          'Overloaded',
          `this provider has ${shared.open} streams open, its limit (server.maxOpenStreams ${maxOpenStreams})`,
          { neverSent: true },
        );
      }
      if (streams.has(id)) return new RpcError('BadRequest', `stream ${id} is already open`);
      if (!granted) {
        granted = true;
        const grant = receiveWindow.takeInitialGrant();
        if (grant > 0) writer.windowUpdate(0, grant);
      }
      if (id > highest) highest = id;
      const stream = new WireStream(id, kind, serializer, deadline);
      streams.set(id, stream);
      shared.open++;
      return stream;
    },
    onFrame(frame) {
      if (frame.kind === FrameKind.StreamMessage) onMessage(frame);
      else if (frame.kind === FrameKind.WindowUpdate) onWindowUpdate(frame);
      else if (frame.kind === FrameKind.StreamEnd) {
        const stream = streams.get(frame.requestId);
        if (stream === undefined) {
          if (frame.requestId > highest)
            violation(`a stream end for stream ${frame.requestId}, never opened`);
          return;
        }
        stream.inbox?.end();
      }
    },
    seen(id) {
      if (id > highest) highest = id;
    },
    release(id) {
      const stream = streams.get(id);
      if (stream === undefined) return;
      stream.clear();
      streams.delete(id);
      shared.open--;
      stream.send.wakeAll();
    },
    stopAll(reason) {
      for (const stream of streams.values()) stream.stop(reason);
    },
  };
}
