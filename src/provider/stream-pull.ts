/**
 * Pulls a stream handler's messages so that a stop interrupts a pull in progress: the provider's stream
 * ports (server-streams.ts over the wire, local-stream.ts in-process, http/http-stream.ts over HTTP,
 * grpc/grpc-stream-port.ts over gRPC)
 * await `next()` and their waits for room through `until()`, and `stop()` wakes whichever is pending
 * with `undefined` at once — a stop does not wait for a handler busy in an await.
 *
 * Not `Promise.race([iterator.next(), whenStopped])`: every race adds a reaction to the long-lived
 * `whenStopped` promise that stays until the stream ends, so memory and garbage collection grew with
 * every message (200,000 messages kept 200,000 reactions). Here each pull is one promise whose wake-up
 * is replaced by the next pull: what a stream holds does not grow with its length.
 */
export class StreamPull {
  readonly #iterator: AsyncIterator<unknown>;
  #wake: ((value: undefined) => void) | undefined;
  #stopped = false;

  constructor(iterator: AsyncIterator<unknown>) {
    this.#iterator = iterator;
  }

  /** The handler's next step, or undefined once the stream was stopped (before or while waiting). */
  next(): Promise<IteratorResult<unknown> | undefined> {
    return this.until(this.#iterator.next());
  }

  /** `promise`'s outcome, or undefined as soon as the stream is stopped. */
  until<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.#stopped) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      this.#wake = resolve;
      promise.then(resolve, reject);
    });
  }

  /** Wakes the pending pull or wait with undefined; every later one answers undefined at once. */
  stop(): void {
    this.#stopped = true;
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.(undefined);
  }
}
