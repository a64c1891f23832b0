/**
 * What a stream call shows its filters (docs/filters.md "Streams"): its kind, the messages each way so
 * far, and the listeners of each message. One meter per stream invocation, on both sides; counting a
 * message is two field updates, and a listener is called only when a filter registered one (nothing is
 * paid per message when nobody listens).
 */
import type { InvocationStream, StreamDirection, StreamMessageListener } from './invocation.js';

export class StreamMeter implements InvocationStream {
  messagesIn = 0;
  messagesOut = 0;
  /** When the stream opened (performance.now()). */
  readonly openedAt = performance.now();
  #listeners: StreamMessageListener[] | undefined;

  constructor(readonly kind: 'server' | 'client' | 'bidi') {}

  onMessage(listener: StreamMessageListener): void {
    if (typeof listener !== 'function') throw new TypeError('onMessage() takes a function');
    if (this.#listeners === undefined) this.#listeners = [listener];
    else this.#listeners.push(listener);
  }

  /** A message went `direction`: counted, and told to the listeners (one that throws is ignored). */
  counted(direction: StreamDirection, message: unknown): void {
    if (direction === 'in') this.messagesIn++;
    else this.messagesOut++;
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(direction, message);
      } catch {
        // a listener never changes how the stream goes
      }
    }
  }

  /** `source`'s messages, each counted `direction` as it is taken; `return()`/`throw()` passed on. */
  meter(source: AsyncIterable<unknown>, direction: StreamDirection): AsyncIterable<unknown> {
    const meter = this;
    return {
      [Symbol.asyncIterator](): AsyncIterator<unknown> {
        const inner = source[Symbol.asyncIterator]();
        const take = (step: IteratorResult<unknown>): IteratorResult<unknown> => {
          if (step.done !== true) meter.counted(direction, step.value);
          return step;
        };
        const iterator: AsyncIterator<unknown> = {
          next: () => inner.next().then(take),
        };
        if (inner.return !== undefined) iterator.return = (value?: unknown) => inner.return!(value);
        if (inner.throw !== undefined) iterator.throw = (error?: unknown) => inner.throw!(error);
        return iterator;
      },
    };
  }
}

/** `source` metered when it is an async iterable; otherwise as it is (the port says what is wrong). */
export function meterIfIterable(meter: StreamMeter, source: unknown, direction: StreamDirection): unknown {
  const iterable = source as AsyncIterable<unknown> | null | undefined;
  if (typeof iterable?.[Symbol.asyncIterator] !== 'function') return source;
  return meter.meter(iterable, direction);
}
