/**
 * Stream faults a test kit provider injects (`provider.streamFault(method, faults)`): messages dropped,
 * each message delayed, or the stream cut after N messages with a `Network` error, for a number of
 * streams or until healed. They apply to what the consumer sees of the stream: the handler's messages
 * of a server or two-way stream on their way out, the consumer's messages of a client stream on their
 * way into the handler. The kit wraps the stream methods of the implementation it is given (each
 * bound to the implementation itself), so nothing of Callisto's path changes: the messages still go
 * through the port, the flow control and the frame codec.
 */
import { RpcError } from '../core/rpc-error.js';
import type { ServiceDefinition, StreamKind } from '../service/define-service.js';

/** What a stream meets (every field optional; together they apply in the order listed). */
export interface StreamFaults {
  /** Drops the message at `index` (0-based, counting every message, dropped ones included) when true. */
  readonly drop?: ((index: number, message: unknown) => boolean) | undefined;
  /** Holds each message that many ms before it goes on. */
  readonly delayMs?: number | undefined;
  /**
   * Cuts the stream once that many messages went through (0: before the first): the stream fails with a
   * `Network` error, after the messages before it, as a connection lost mid-stream would.
   */
  readonly cutAfter?: number | undefined;
}

/** Checks a plan's faults once, when given (a TypeError naming what is wrong). */
export function checkStreamFaults(method: string, faults: StreamFaults): void {
  const where = `streamFault(${JSON.stringify(method)})`;
  if (typeof faults !== 'object' || faults === null)
    throw new TypeError(`${where} takes an object of faults`);
  if (faults.drop !== undefined && typeof faults.drop !== 'function')
    throw new TypeError(`${where}: drop must be a function (index, message) => boolean`);
  for (const key of ['delayMs', 'cutAfter'] as const) {
    const value = faults[key];
    if (value !== undefined && !(Number.isInteger(value) && value >= 0))
      throw new TypeError(`${where}: ${key} must be a whole number ≥ 0, not ${JSON.stringify(value)}`);
  }
}

/** `source` with `faults` applied, as the consumer of it sees it. */
export async function* faulted(
  source: AsyncIterable<unknown>,
  faults: StreamFaults,
  label: string,
): AsyncGenerator<unknown> {
  const cut = () =>
    new RpcError('Network', `${label}: the test kit cut the stream after ${faults.cutAfter} messages`);
  if (faults.cutAfter === 0) throw cut();
  let index = 0;
  let passed = 0;
  for await (const message of source) {
    const at = index++;
    if (faults.drop?.(at, message) === true) continue;
    if (faults.delayMs !== undefined && faults.delayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, faults.delayMs));
    }
    yield message;
    passed++;
    if (faults.cutAfter !== undefined && passed >= faults.cutAfter) throw cut();
  }
}

/** Takes the faults the next stream of `method` meets (one of their remaining streams), if any. */
export type TakeStreamFaults = (method: string) => StreamFaults | undefined;

/**
 * `implementation` as the kit provides it: unchanged when the definition declares no stream method;
 * else an object with every declared method bound to the implementation, its stream methods applying
 * the faults `take` gives for each stream.
 */
export function withStreamFaults<T>(
  definition: ServiceDefinition<T>,
  implementation: object,
  take: TakeStreamFaults,
): object {
  const declared = Object.entries(definition.methods ?? {}) as Array<[string, { stream?: StreamKind }]>;
  if (!declared.some(([, declaration]) => declaration.stream !== undefined)) return implementation;
  const target = implementation as Record<string, unknown>;
  const wrapper: Record<string, unknown> = {};
  for (const [name, declaration] of declared) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    const call = (args: unknown[]) => (original as (...a: unknown[]) => unknown).apply(implementation, args);
    const kind = declaration.stream;
    const label = `${definition.name}.${name}`;
    wrapper[name] =
      kind === undefined
        ? (...args: unknown[]) => call(args)
        : (...args: unknown[]) => {
            const faults = take(name);
            if (faults === undefined) return call(args);
            if (kind === 'client') {
              const input = args[args.length - 1] as AsyncIterable<unknown>;
              return call([...args.slice(0, -1), faulted(input, faults, label)]);
            }
            const output = call(args) as AsyncIterable<unknown> | null | undefined;
            // not a stream: the port says so, as without the fault
            if (typeof output?.[Symbol.asyncIterator] !== 'function') return output;
            return faulted(output, faults, label);
          };
  }
  return wrapper;
}
