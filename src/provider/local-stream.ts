/**
 * The provider's handle on an in-process stream (`injvm`, local-calls.ts): the caller's input handed to
 * the handler as it is, and the handler's messages handed to the caller by reference, waiting while the
 * caller is behind (consumer/client-stream.ts `deliver`). Stopped by the caller's cancel (a `break`,
 * its signal, its deadline) or the provider's shutdown, like a stream over the wire.
 */
import type { LocalStream } from '../core/local-call.js';
import { RpcError } from '../core/rpc-error.js';
import type { StreamMeter } from '../core/stream-meter.js';
import type { StreamPort } from './stream-port.js';
import { StreamPull } from './stream-pull.js';

export function createLocalStreamPort(local: LocalStream): StreamPort {
  let stopped: RpcError | undefined;
  let iterator: AsyncIterator<unknown> | undefined;
  let pull: StreamPull | undefined;
  let meter: StreamMeter | undefined;
  return {
    id: 0,
    kind: local.kind,
    input: local.input,
    async drive(source, label) {
      const iterable = source as AsyncIterable<unknown> | null | undefined;
      if (typeof iterable?.[Symbol.asyncIterator] !== 'function') {
        throw new RpcError('Internal', `${label} is a ${local.kind} stream but returned no AsyncIterable`);
      }
      iterator = iterable[Symbol.asyncIterator]();
      pull = new StreamPull(iterator);
      if (stopped !== undefined) pull.stop();
      let finished = false;
      try {
        for (;;) {
          if (stopped !== undefined) break;
          const step = await pull.next();
          if (step === undefined) break;
          if (step.done === true) {
            finished = true;
            break;
          }
          const room = local.deliver(step.value);
          meter?.counted('out', step.value);
          if (room !== undefined) await pull.until(room);
        }
      } catch (error) {
        finished = true;
        throw error;
      } finally {
        if (!finished && stopped === undefined) await iterator.return?.();
      }
      if (stopped !== undefined) throw stopped;
    },
    countSentWith(given) {
      meter = given;
    },
    stop(reason) {
      if (stopped !== undefined) return;
      stopped = reason;
      pull?.stop();
      void iterator?.return?.()?.catch?.(() => {});
    },
  };
}
