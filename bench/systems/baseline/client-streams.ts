/**
 * The baseline client's streams: each open stream is a queue the caller reads with `for await`. The
 * socket is paused while more than {@link PAUSE_AT} messages wait unread over all streams (TCP then
 * holds the server, whose writes wait for 'drain') and resumed below {@link RESUME_AT}. Leaving the
 * loop early sends a cancel.
 */
import type { Socket } from 'node:net';
import type { BenchTick } from '../../lib/scenarios.js';
import { type BaselineRequest, CANCEL_METHOD } from './framing.js';

/** Unread messages over all streams at which the socket is paused, and below which it resumes. */
export const PAUSE_AT = 4096;
export const RESUME_AT = 1024;

interface StreamState {
  items: unknown[];
  head: number;
  ended: boolean;
  error: Error | undefined;
  wake: (() => void) | undefined;
}

export interface ClientStreams {
  open(count: number): AsyncIterable<BenchTick>;
  /** A message for stream `id`; false when no such stream is open (then it is a unary response). */
  item(id: number, item: unknown): boolean;
  /** The end (or failure) of stream `id`; false when no such stream is open. */
  end(id: number, error: string | undefined): boolean;
  /** The connection closed: every open stream fails. */
  closed(): void;
}

export function createClientStreams(
  socket: Socket,
  nextId: () => number,
  send: (request: BaselineRequest) => void,
): ClientStreams {
  const streams = new Map<number, StreamState>();
  let unread = 0;
  const consumed = (): void => {
    unread--;
    if (socket.isPaused() && unread < RESUME_AT) socket.resume();
  };
  const iterate = async function* (id: number, state: StreamState): AsyncGenerator<BenchTick> {
    let finished = false;
    try {
      for (;;) {
        if (state.head < state.items.length) {
          const item = state.items[state.head++] as BenchTick;
          if (state.head === state.items.length) {
            state.items = [];
            state.head = 0;
          }
          consumed();
          yield item;
          continue;
        }
        if (state.error !== undefined) throw state.error;
        if (state.ended) {
          finished = true;
          return;
        }
        await new Promise<void>((resolve) => {
          state.wake = resolve;
        });
      }
    } finally {
      streams.delete(id);
      unread -= state.items.length - state.head;
      if (socket.isPaused() && unread < RESUME_AT) socket.resume();
      if (!finished && state.error === undefined) send({ id: nextId(), method: CANCEL_METHOD, args: [id] });
    }
  };
  const wake = (state: StreamState): void => {
    const resolve = state.wake;
    state.wake = undefined;
    resolve?.();
  };
  return {
    open(count) {
      const id = nextId();
      const state: StreamState = { items: [], head: 0, ended: false, error: undefined, wake: undefined };
      streams.set(id, state);
      send({ id, method: 'ticks', args: [count] });
      return iterate(id, state);
    },
    item(id, item) {
      const state = streams.get(id);
      if (state === undefined) return false;
      state.items.push(item);
      if (++unread > PAUSE_AT && !socket.isPaused()) socket.pause();
      wake(state);
      return true;
    },
    end(id, error) {
      const state = streams.get(id);
      if (state === undefined) return false;
      if (error === undefined) state.ended = true;
      else state.error = new Error(error);
      wake(state);
      return true;
    },
    closed() {
      for (const state of streams.values()) {
        state.error ??= new Error('connection closed');
        wake(state);
      }
    },
  };
}
