/**
 * The receiving end of one stream, either side: messages that arrived and wait for the application,
 * read as an async iterator. Taking a message tells `consumed` its size (the flow control returns the
 * credit then, not when it arrived); the iterator's `return()` (a `break` out of `for await`) tells
 * `abandoned`. After `end()` the iterator finishes once the waiting messages are read; after `fail()` it
 * throws the error once they are.
 */

export interface InboxEvents {
  /** A message of `bytes` was handed to the application. */
  consumed(bytes: number): void;
  /** A message arrived and waits for the application (or is handed to it at once). */
  arrived?(value: unknown): void;
  /** The application stopped reading before the end (`return()`/`throw()` on the iterator). */
  abandoned(): void;
}

interface Waiting {
  resolve(result: IteratorResult<unknown>): void;
  reject(error: unknown): void;
}

export class StreamInbox implements AsyncIterableIterator<unknown> {
  readonly #values: unknown[] = [];
  readonly #sizes: number[] = [];
  #head = 0;
  #waiting: Waiting | undefined;
  #state: 'open' | 'ended' | 'failed' | 'abandoned' = 'open';
  #error: unknown;
  readonly #events: InboxEvents;

  constructor(events: InboxEvents) {
    this.#events = events;
  }

  /** Messages waiting to be read. */
  get queued(): number {
    return this.#values.length - this.#head;
  }

  /** Whether it still takes messages. */
  get open(): boolean {
    return this.#state === 'open';
  }

  push(value: unknown, bytes: number): void {
    if (this.#state !== 'open') return;
    this.#events.arrived?.(value);
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      this.#events.consumed(bytes);
      waiting.resolve({ value, done: false });
      return;
    }
    this.#values.push(value);
    this.#sizes.push(bytes);
  }

  /** The sender ended the stream cleanly. */
  end(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ended';
    this.#settleWaiting();
  }

  /** The stream failed: the reader gets `error` after the messages already here. */
  fail(error: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'failed';
    this.#error = error;
    this.#settleWaiting();
  }

  #settleWaiting(): void {
    const waiting = this.#waiting;
    if (waiting === undefined || this.queued > 0) return;
    this.#waiting = undefined;
    if (this.#state === 'failed') waiting.reject(this.#error);
    else waiting.resolve({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.queued > 0) {
      const value = this.#values[this.#head];
      const bytes = this.#sizes[this.#head]!;
      this.#values[this.#head] = undefined;
      this.#head++;
      if (this.#head > 1024 && this.#head * 2 > this.#values.length) {
        this.#values.splice(0, this.#head);
        this.#sizes.splice(0, this.#head);
        this.#head = 0;
      }
      this.#events.consumed(bytes);
      return Promise.resolve({ value, done: false });
    }
    if (this.#state === 'failed') {
      this.#state = 'ended';
      return Promise.reject(this.#error);
    }
    if (this.#state !== 'open') return Promise.resolve({ value: undefined, done: true });
    if (this.#waiting !== undefined) return Promise.reject(new Error('next() called while one is pending'));
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<unknown>> {
    this.#abandon();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<unknown>> {
    this.#abandon();
    return Promise.reject(error);
  }

  #abandon(): void {
    const wasOpen = this.#state === 'open';
    this.#state = 'abandoned';
    this.#values.length = 0;
    this.#sizes.length = 0;
    this.#head = 0;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve({ value: undefined, done: true });
    if (wasOpen) this.#events.abandoned();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
