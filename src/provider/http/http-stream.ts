/**
 * A server stream through the HTTP/JSON entry (docs/http.md, "Streams over HTTP"): the handler's
 * messages written to the response as they come, as Server-Sent Events (`text/event-stream`, when the
 * request's `Accept` asks for it) or NDJSON (`application/x-ndjson`, otherwise), each in the json
 * serializer's tagged format. Backpressure is the socket's: the next message is pulled from the handler
 * only after `write()` said the last one fit, or after 'drain' — a reader that does not read holds the
 * handler at its `yield`, so what waits is bounded by the socket buffers. The stream's end and its
 * error are written in the same format by `end()`/`fail()`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorPayload } from '../../core/error-payload.js';
import { messageOf, RpcError } from '../../core/rpc-error.js';
import { SECURITY_HEADERS } from '../../http/security-headers.js';
import type { Serializer } from '../../serialization/serializer.js';
import type { StreamPort } from '../stream-port.js';
import { StreamPull } from '../stream-pull.js';

export const EVENT_STREAM_CONTENT = 'text/event-stream; charset=utf-8';
export const NDJSON_CONTENT = 'application/x-ndjson; charset=utf-8';

/** The port of one HTTP server stream, with the writes the entry makes when the stream ends. */
export interface HttpStreamPort extends StreamPort {
  /** Whether the stream's headers went out (an error after that is written in the stream's format). */
  readonly started: boolean;
  /** The clean end: `event: end` (SSE) or the line `{"$t":"end"}` (NDJSON), then the response ends. */
  end(): void;
  /** The error (its code and payload) as the stream's last event or line, then the response ends. */
  fail(code: string, payload: ErrorPayload): void;
}

/** Server-Sent Events when the request's `Accept` includes `text/event-stream`; NDJSON otherwise. */
export function wantsEventStream(request: IncomingMessage): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.toLowerCase().includes('text/event-stream');
}

export interface HttpStreamInit {
  readonly response: ServerResponse;
  readonly json: Serializer;
  readonly eventStream: boolean;
  /** Headers to send with the stream's start (the call's id). */
  readonly headers?: Readonly<Record<string, string>>;
}

export function createHttpStreamPort(init: HttpStreamInit): HttpStreamPort {
  const { response, json, eventStream } = init;
  let stopped: RpcError | undefined;
  let started = false;
  let iterator: AsyncIterator<unknown> | undefined;
  let pull: StreamPull | undefined;

  const start = (): void => {
    if (started || response.headersSent || response.destroyed) return;
    started = true;
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      ...init.headers,
      'content-type': eventStream ? EVENT_STREAM_CONTENT : NDJSON_CONTENT,
      // proxies (nginx) pass each event on as it comes
      'x-accel-buffering': 'no',
    });
    response.flushHeaders();
  };

  const message = (text: string): string => (eventStream ? `data: ${text}\n\n` : `${text}\n`);

  /** Resolves once the socket took what was written ('drain'), or the stream stopped. */
  const drained = (steps: StreamPull): Promise<unknown> =>
    steps.until(new Promise<void>((resolve) => response.once('drain', resolve)));

  const last = (text: string): void => {
    start();
    if (response.writableEnded || response.destroyed) return;
    response.end(text);
  };

  return {
    id: 0,
    kind: 'server',
    input: undefined,
    get started() {
      return started;
    },
    async drive(source, label) {
      const iterable = source as AsyncIterable<unknown> | null | undefined;
      if (typeof iterable?.[Symbol.asyncIterator] !== 'function') {
        throw new RpcError('Internal', `${label} is a server stream but returned no AsyncIterable`);
      }
      iterator = iterable[Symbol.asyncIterator]();
      if (stopped !== undefined) {
        // stopped before it began (the caller went away, its deadline passed): nothing is written
        await iterator.return?.();
        throw stopped;
      }
      start();
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
          if (stopped !== undefined) break;
          let text: string;
          try {
            text = Buffer.from(json.encode(step.value)).toString('utf8');
          } catch (error) {
            throw new RpcError('Internal', `cannot encode a message of ${label}: ${messageOf(error)}`);
          }
          if (response.destroyed) break;
          // write() false: the socket's buffer is full; the next message waits for 'drain'
          if (!response.write(message(text))) await drained(steps);
        }
      } catch (error) {
        finished = true;
        throw error;
      } finally {
        if (!finished && stopped === undefined) await iterator.return?.();
      }
      if (stopped !== undefined) throw stopped;
    },
    stop(reason) {
      if (stopped !== undefined) return;
      stopped = reason;
      pull?.stop();
      void iterator?.return?.()?.catch?.(() => {});
    },
    end() {
      last(eventStream ? 'event: end\ndata: {}\n\n' : '{"$t":"end"}\n');
    },
    fail(code, payload) {
      let text: string;
      try {
        text = Buffer.from(json.encode({ code, ...payload })).toString('utf8');
      } catch {
        text = JSON.stringify({ code, name: payload.name, message: payload.message, details: {} });
      }
      last(eventStream ? `event: error\ndata: ${text}\n\n` : `{"$t":"error","v":${text}}\n`);
    },
  };
}
