/**
 * The baseline client: one TCP connection, calls multiplexed by id, requests batched per tick; server
 * streams on the same connection (client-streams.ts).
 */
import { connect } from 'node:net';
import { type BenchClient, runClientMain } from '../../lib/client-main.js';
import type { BenchUser } from '../../lib/scenarios.js';
import { createClientStreams } from './client-streams.js';
import {
  type BaselineResponse,
  type BaselineStreamItem,
  createBatchedWriter,
  createFrameReader,
} from './framing.js';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

await runClientMain(async (port): Promise<BenchClient> => {
  const socket = connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  const send = createBatchedWriter(socket);
  const streams = createClientStreams(socket, () => nextId++, send);
  const read = createFrameReader((message) => {
    if ('item' in (message as object)) {
      const { id, item } = message as BaselineStreamItem;
      streams.item(id, item);
      return;
    }
    const { id, result, error, end } = message as BaselineResponse;
    if (end === true || (error !== undefined && !pending.has(id))) {
      streams.end(id, error);
      return;
    }
    const call = pending.get(id);
    if (call === undefined) return;
    pending.delete(id);
    if (error !== undefined) call.reject(new Error(error));
    else call.resolve(result);
  });
  socket.on('data', read);
  socket.on('close', () => {
    streams.closed();
    for (const call of pending.values()) call.reject(new Error('connection closed'));
    pending.clear();
  });
  socket.on('error', () => {});

  const invoke = (method: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ id, method, args });
    });
  return {
    say: (msg) => invoke('say', [msg]) as Promise<string>,
    getUser: (id) => invoke('getUser', [id]) as Promise<BenchUser>,
    ticks: (count) => streams.open(count),
    close: () => {
      socket.end();
    },
  };
});
