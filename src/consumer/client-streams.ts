/**
 * The streams of one client connection (docs/protocol.md, "Streams"): opening within the connection's
 * limit, the provider's messages into each stream's inbox within the receive windows (credit returned as
 * the caller reads), the caller's input out within the send windows and its end as a half-close, and
 * the provider's protocol violations (a message for a stream never opened, beyond its window, a window
 * that would overflow), which close the connection. A stream ends with the provider's response frame
 * (status 0: clean; else an error payload), which settles its call through the connection's pending calls.
 */
import { IdTable } from '../core/id-table.js';
import { messageOf, RpcError } from '../core/rpc-error.js';
import type { StreamOptions } from '../protocol/connection-options.js';
import { type Frame, FrameKind, HEADER_BYTES } from '../protocol/frame.js';
import type { FrameWriter } from '../protocol/frame-writer.js';
import {
  applyWindowUpdate,
  INITIAL_CONNECTION_WINDOW_BYTES,
  INITIAL_STREAM_WINDOW_BYTES,
  ReceiveWindow,
  SendWindow,
  type WindowUpdateTarget,
} from '../protocol/stream-flow.js';
import type { ClientStream } from './client-stream.js';
import type { WireCall } from './pending-call.js';

export interface ClientStreams {
  readonly size: number;
  /**
   * Tracks `call`'s stream as `id`: the call to hand the pending calls (it forgets the stream when it
   * settles), or an RpcError (Overloaded, never sent) when the connection has its limit open.
   */
  open(id: number, call: WireCall, stream: ClientStream): WireCall | RpcError;
  /** The opening request was written: the input starts flowing. */
  started(id: number): void;
  onFrame(frame: Frame): void;
}

export interface ClientStreamsInit {
  readonly writer: FrameWriter;
  readonly options: StreamOptions;
  /** The provider broke the protocol: the connection is closed. */
  onViolation(message: string): void;
  /** Fails the stream `id` with `error` and tells the provider (a cancel). */
  abort(id: number, error: RpcError): void;
}

interface OpenStream {
  readonly call: WireCall;
  readonly stream: ClientStream;
  readonly send: SendWindow;
  readonly receive: ReceiveWindow;
  closed: boolean;
}

export function createClientStreams(init: ClientStreamsInit): ClientStreams {
  const { writer, options, onViolation, abort } = init;
  const streams = new IdTable<OpenStream>();
  const sendWindow = new SendWindow(INITIAL_CONNECTION_WINDOW_BYTES);
  const receiveWindow = new ReceiveWindow(INITIAL_CONNECTION_WINDOW_BYTES, options.connectionWindowBytes);
  let granted = false;
  let highest = 0;

  const returnConnectionCredit = (bytes: number): void => {
    const grant = receiveWindow.consumed(bytes);
    if (grant > 0) writer.windowUpdate(0, grant);
  };

  const close = (id: number, open: OpenStream): void => {
    if (open.closed) return;
    open.closed = true;
    open.stream.detach();
    streams.delete(id);
    open.send.wakeAll();
  };

  /** A failure after the stream delivered or sent something is the application's, never retried. */
  const settled = (open: OpenStream, error: RpcError): RpcError =>
    open.stream.untouched
      ? error
      : new RpcError(error.code, error.message, {
          cause: error.cause,
          remote: error.remote,
          remoteName: error.remoteName,
          remoteStack: error.remoteStack,
          details: { ...error.details, started: true },
        });

  const pump = async (id: number, open: OpenStream): Promise<void> => {
    const input = open.stream.input!;
    const label = open.call.route.label;
    const serializer = open.call.route.serializer;
    let iterator: AsyncIterator<unknown> | undefined;
    let done = false;
    try {
      iterator = input[Symbol.asyncIterator]();
      for (;;) {
        const step = await iterator.next();
        if (open.closed) break;
        if (step.done === true) {
          done = true;
          writer.streamEnd(id);
          return;
        }
        const body = serializer.encode(step.value);
        if (HEADER_BYTES + body.length > options.maxMessageBytes) {
          throw new Error(
            `a message of ${HEADER_BYTES + body.length} bytes is larger than maxStreamMessageBytes (${options.maxMessageBytes})`,
          );
        }
        while (!open.closed && !(open.send.open && sendWindow.open)) {
          await (open.send.open ? sendWindow.wait() : open.send.wait());
        }
        if (open.closed) break;
        const bytes = writer.streamMessage(id, serializer.id, body);
        open.send.spend(bytes);
        sendWindow.spend(bytes);
        open.stream.sent++;
      }
    } catch (error) {
      done = true;
      if (!open.closed) {
        abort(
          id,
          new RpcError('Cancelled', `the input of ${label} failed: ${messageOf(error)}`, { cause: error }),
        );
      }
    } finally {
      if (!done) await iterator?.return?.();
    }
  };

  const onMessage = (frame: Frame): void => {
    const bytes = HEADER_BYTES + frame.meta.length + frame.body.length;
    if (!receiveWindow.receive(bytes)) {
      onViolation(`a stream message of ${bytes} bytes beyond the connection's window`);
      return;
    }
    const open = streams.get(frame.requestId);
    if (open === undefined) {
      if (frame.requestId > highest)
        onViolation(`a stream message for stream ${frame.requestId}, never opened`);
      else returnConnectionCredit(bytes);
      return;
    }
    const inbox = open.stream.inbox;
    if (inbox === undefined) {
      onViolation(`a stream message for client stream ${frame.requestId}, which takes none`);
      return;
    }
    if (!open.receive.receive(bytes)) {
      onViolation(`a stream message of ${bytes} bytes beyond stream ${frame.requestId}'s window`);
      return;
    }
    if (bytes > options.maxMessageBytes) {
      returnConnectionCredit(bytes);
      abort(
        frame.requestId,
        new RpcError(
          'Serialization',
          `a message of ${open.call.route.label} (${bytes} bytes) is larger than maxStreamMessageBytes (${options.maxMessageBytes})`,
        ),
      );
      return;
    }
    let value: unknown;
    try {
      value = open.call.route.serializer.decode(frame.body);
    } catch (error) {
      returnConnectionCredit(bytes);
      abort(
        frame.requestId,
        new RpcError(
          'Serialization',
          `cannot decode a message of ${open.call.route.label}: ${messageOf(error)}`,
          { cause: error },
        ),
      );
      return;
    }
    inbox.push(value, bytes);
  };

  const windowTarget: WindowUpdateTarget = {
    connection: sendWindow,
    streamWindow: (id) => streams.get(id)?.send,
    get highest() {
      return highest;
    },
    violation: onViolation,
  };
  const onWindowUpdate = (frame: Frame): void => applyWindowUpdate(frame.requestId, frame.body, windowTarget);

  return {
    get size() {
      return streams.size;
    },
    open(id, call, stream) {
      if (streams.size >= options.maxStreamsPerConnection) {
        return new RpcError(
          'Overloaded',
          `this connection has ${streams.size} streams open, its limit (maxStreamsPerConnection ${options.maxStreamsPerConnection})`,
          { neverSent: true },
        );
      }
      if (!granted) {
        granted = true;
        const grant = receiveWindow.takeInitialGrant();
        if (grant > 0) writer.windowUpdate(0, grant);
      }
      if (id > highest) highest = id;
      const open: OpenStream = {
        call,
        stream,
        send: new SendWindow(INITIAL_STREAM_WINDOW_BYTES),
        receive: new ReceiveWindow(INITIAL_STREAM_WINDOW_BYTES, options.windowBytes),
        closed: false,
      };
      streams.set(id, open);
      stream.attach((bytes) => {
        returnConnectionCredit(bytes);
        const grant = open.receive.consumed(bytes);
        if (grant > 0 && !open.closed) writer.windowUpdate(id, grant);
      });
      return {
        route: call.route,
        args: call.args,
        attachments: call.attachments,
        callId: call.callId,
        signal: call.signal,
        oneway: false,
        idempotent: false,
        attempt: call.attempt,
        stream,
        answered(value) {
          close(id, open);
          call.answered(value);
        },
        failed(error) {
          close(id, open);
          call.failed(settled(open, error));
        },
      };
    },
    started(id) {
      const open = streams.get(id);
      if (open === undefined) return;
      if (open.stream.inbox !== undefined) {
        const grant = open.receive.takeInitialGrant();
        if (grant > 0) writer.windowUpdate(id, grant);
      }
      if (open.stream.input !== undefined) void pump(id, open);
    },
    onFrame(frame) {
      if (frame.kind === FrameKind.StreamMessage) onMessage(frame);
      else if (frame.kind === FrameKind.WindowUpdate) onWindowUpdate(frame);
      // a stream end (kind 5) is the consumer's to send; one from a provider is ignored
    },
  };
}
