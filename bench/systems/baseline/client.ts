/**
 * The baseline client: one TCP connection (S5: as many as asked, calls over them in turn), calls
 * multiplexed by id, requests batched per tick; server streams on the same connection
 * (client-streams.ts); `echoBytes` in raw-bytes frames.
 */

import type { Socket } from 'node:net';
import { connect } from 'node:net';
import { type BenchClient, runClientMain } from '../../lib/client-main.js';
import type { BenchTick, BenchUser } from '../../lib/scenarios.js';
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

interface BaselineConnection {
  invoke(method: string, args: unknown[]): Promise<unknown>;
  echoBytes(bytes: Uint8Array): Promise<Uint8Array>;
  ticks(count: number): AsyncIterable<BenchTick>;
  socket: Socket;
}

async function open(port: number): Promise<BaselineConnection> {
  const socket = connect({ host: '127.0.0.1', port, noDelay: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  const send = createBatchedWriter(socket);
  const streams = createClientStreams(socket, () => nextId++, send);
  const read = createFrameReader(
    (message) => {
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
    },
    ({ id, bytes }) => {
      const call = pending.get(id);
      if (call === undefined) return;
      pending.delete(id);
      call.resolve(bytes);
    },
  );
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
  const echoBytes = (bytes: Uint8Array): Promise<Uint8Array> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      send.bytes(id, bytes);
    });
  return { invoke, echoBytes, ticks: (count) => streams.open(count), socket };
}

await runClientMain(async (port, { connections }): Promise<BenchClient> => {
  const opened = await Promise.all(Array.from({ length: connections }, () => open(port)));
  let next = 0;
  const pick = (): BaselineConnection => (connections === 1 ? opened[0]! : opened[next++ % connections]!);
  return {
    connections,
    say: (msg) => pick().invoke('say', [msg]) as Promise<string>,
    getUser: (id) => pick().invoke('getUser', [id]) as Promise<BenchUser>,
    echoBytes: (bytes) => pick().echoBytes(bytes),
    ticks: (count) => opened[0]!.ticks(count),
    close: () => {
      for (const connection of opened) connection.socket.end();
    },
  };
});
