/**
 * The consumer's side of one stream call, as the typed proxy makes it (reference.ts): the kind, the
 * caller's input (client and two-way streams: the last argument), the inbox the caller iterates (server
 * and two-way streams), and the signal that cancels the stream: aborted by a `break` out of the
 * iteration, by the caller's own signal, or by the connection. The connection attaches to it when the
 * stream opens (client-streams.ts) and returns the credit of each message the caller takes.
 */
import type { LocalStream } from '../core/local-call.js';
import { RpcError } from '../core/rpc-error.js';
import { StreamMeter } from '../core/stream-meter.js';
import { StreamInbox } from '../protocol/stream-inbox.js';
import type { StreamKind } from '../service/define-service.js';

/** Messages an in-process provider may hand over ahead of the caller before it waits. */
export const LOCAL_STREAM_AHEAD = 16;

export class ClientStream extends StreamMeter implements LocalStream {
  /** What the caller sends (client and two-way streams), metered as the connection takes it. */
  readonly input: AsyncIterable<unknown> | undefined;
  /** What the caller reads (server and two-way streams). */
  readonly inbox: StreamInbox | undefined;
  readonly #controller = new AbortController();
  /** Messages handed to the caller (a stream that delivered one is never failed over). */
  delivered = 0;
  /** Messages of the input sent (likewise). */
  sent = 0;
  #consumed: ((bytes: number) => void) | undefined;
  /** An in-process provider waiting for the caller to catch up. */
  #room: (() => void) | undefined;

  constructor(kind: StreamKind, input: AsyncIterable<unknown> | undefined, signal: AbortSignal | undefined) {
    super(kind);
    this.input = input === undefined ? undefined : this.meter(input, 'out');
    this.inbox =
      kind === 'client'
        ? undefined
        : new StreamInbox({
            arrived: (value) => this.counted('in', value),
            consumed: (bytes) => {
              this.delivered++;
              this.#consumed?.(bytes);
              this.#wakeRoom();
            },
            abandoned: () => {
              this.#wakeRoom();
              this.#controller.abort(new RpcError('Cancelled', 'the caller stopped reading the stream'));
            },
          });
    if (signal !== undefined) {
      if (signal.aborted) this.#controller.abort(signal.reason);
      else signal.addEventListener('abort', () => this.#controller.abort(signal.reason), { once: true });
    }
  }

  /** Aborted when the caller gives the stream up. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Whether it may still be sent elsewhere: nothing delivered or sent yet. */
  get untouched(): boolean {
    return this.delivered === 0 && this.sent === 0;
  }

  /** The connection that carries it: told the bytes of each message the caller takes. */
  attach(consumed: (bytes: number) => void): void {
    this.#consumed = consumed;
  }

  /** In-process: one message by reference; a promise while the caller is LOCAL_STREAM_AHEAD behind. */
  deliver(value: unknown): Promise<void> | undefined {
    const inbox = this.inbox!;
    inbox.push(value, 0);
    if (inbox.queued < LOCAL_STREAM_AHEAD || !inbox.open) return undefined;
    return new Promise<void>((wake) => {
      this.#room = wake;
    });
  }

  #wakeRoom(): void {
    const wake = this.#room;
    if (wake === undefined) return;
    if (this.inbox!.open && this.inbox!.queued >= LOCAL_STREAM_AHEAD) return;
    this.#room = undefined;
    wake();
  }

  /** Stops telling the connection (the attempt ended). */
  detach(): void {
    this.#consumed = undefined;
  }
}
