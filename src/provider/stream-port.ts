/**
 * A provider's handle on one open stream, as the method's terminal step and the entry adapter see it
 * (the wire's is made by server-streams.ts): the kind, the consumer's messages (client and two-way
 * streams), and `drive()`, which sends what the handler's async iterable yields within the flow control.
 */
import type { RpcError } from '../core/rpc-error.js';
import type { StreamMeter } from '../core/stream-meter.js';
import type { StreamKind } from '../service/define-service.js';

export interface StreamPort {
  readonly id: number;
  readonly kind: StreamKind;
  /** The consumer's messages (client and two-way streams): the handler's stream argument. */
  readonly input: AsyncIterable<unknown> | undefined;
  /**
   * Sends every message `source` yields, each after the window allows it; resolves when it is done,
   * rejects with what it threw, or with why the stream was stopped (cancel, deadline, shutdown); its
   * `return()` is called when stopped.
   */
  drive(source: unknown, label: string): Promise<void>;
  /** Stops the stream (cancelled, deadline, shutdown, connection gone): the handler's iteration ends. */
  stop(reason: RpcError): void;
  /**
   * Optional: the port counts the messages it sends itself, calling `meter.counted('out', message)`
   * after each (the wire's and in-process ports do). A port without it has what `drive` is given
   * wrapped to count them instead (metered-stream.ts), which costs a promise per message.
   */
  countSentWith?(meter: StreamMeter): void;
}
