/**
 * An open stream as the provider's invocation holds it (`invocation.stream`): the entry adapter's
 * `StreamPort` (the wire's, in-process, HTTP, any other) with a {@link StreamMeter} around it, so that
 * every port's messages are counted the same way: the consumer's messages as the handler takes them
 * (`in`), the handler's as they are sent (`out`: by the port itself when it counts them, else as the
 * handler yields them). The filters read the counts and register
 * message listeners through it (core/invocation.ts `InvocationStream`).
 */
import type { RpcError } from '../core/rpc-error.js';
import { meterIfIterable, StreamMeter } from '../core/stream-meter.js';
import type { StreamPort } from './stream-port.js';

export class MeteredStreamPort extends StreamMeter implements StreamPort {
  readonly #port: StreamPort;
  /** Whether the port counts what it sends itself (`countSentWith`). */
  readonly #countsSent: boolean;
  readonly input: AsyncIterable<unknown> | undefined;

  constructor(port: StreamPort) {
    super(port.kind);
    this.#port = port;
    this.input = port.input === undefined ? undefined : this.meter(port.input, 'in');
    this.#countsSent = port.countSentWith !== undefined;
    port.countSentWith?.(this);
  }

  get id(): number {
    return this.#port.id;
  }

  /** The adapter's own port. */
  get port(): StreamPort {
    return this.#port;
  }

  drive(source: unknown, label: string): Promise<void> {
    return this.#port.drive(this.#countsSent ? source : meterIfIterable(this, source, 'out'), label);
  }

  stop(reason: RpcError): void {
    this.#port.stop(reason);
  }
}

/** `port` metered (a port already metered is kept as it is). */
export function meteredPort(port: StreamPort): MeteredStreamPort {
  return port instanceof MeteredStreamPort ? port : new MeteredStreamPort(port);
}
