/**
 * The baseline server's streams: `ticks(count)` from the shared async generator, each message written
 * with `socket.write`; when it returns false the stream waits for 'drain' (one shared wait per socket),
 * so a slow reader holds the producer instead of filling memory, then lets the event loop turn once
 * (reads, other calls' requests). Writes between waits leave corked, in
 * one `writev`. A cancel or the socket's close stops the generator (its `return()`).
 */
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { benchStreamService } from '../../lib/scenarios.js';
import { type BaselineResponse, encodePackedFrame } from './framing.js';

export interface ServerStreams {
  open(id: number, count: number): void;
  cancel(id: number): void;
}

export function createServerStreams(
  socket: Socket,
  send: (message: BaselineResponse) => void,
): ServerStreams {
  const cancelled = new Set<number>();
  const open = new Set<number>();
  let drained: Promise<unknown> | undefined;
  const waitDrain = (): Promise<unknown> => {
    // then one turn of the event loop: a writev that completes at once emits 'drain' from a nextTick,
    // and without this the streams would write on and on without the socket ever being read
    drained ??= Promise.race([once(socket, 'drain'), once(socket, 'close')])
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .finally(() => {
        drained = undefined;
      });
    return drained;
  };
  const run = async (id: number, count: number): Promise<void> => {
    socket.cork();
    let corked = true;
    try {
      for await (const item of benchStreamService.ticks(count)) {
        if (cancelled.has(id) || socket.destroyed) return;
        if (!socket.write(encodePackedFrame({ id, item }))) {
          socket.uncork();
          corked = false;
          await waitDrain();
          if (socket.destroyed) return;
          socket.cork();
          corked = true;
        }
      }
      send({ id, end: true });
    } finally {
      if (corked) socket.uncork();
      cancelled.delete(id);
      open.delete(id);
    }
  };
  return {
    open(id, count) {
      open.add(id);
      run(id, count).catch((error: unknown) => {
        if (!socket.destroyed) send({ id, error: String(error) });
      });
    },
    cancel(id) {
      if (open.has(id)) cancelled.add(id);
    },
  };
}
