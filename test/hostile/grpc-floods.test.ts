/**
 * HTTP/2 floods against the gRPC entry, written as raw frames on a real socket (support/h2-frames.ts):
 * a SETTINGS flood and a PING flood from a client that never reads the acknowledgements, and the rapid
 * reset attack (CVE-2023-44487: streams opened and reset at once, thousands a second). Each attacker's
 * connection is closed with a log line naming it, while a well-behaved grpc-js client is served.
 */
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/index.js';
import { GreeterDef, greeterClient, greeterImpl, newSeen, unary } from '../grpc/greeter.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { closedWithin, Flag, FrameType, frame, grpcRequestBlock, rawH2 } from './support/h2-frames.js';

const sockets: net.Socket[] = [];
// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients
const clients: any[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

async function provider() {
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
  const app = await testApp({ logger });
  app.provide(GreeterDef, greeterImpl(newSeen()));
  await app.start();
  return { app, lines };
}

/** Writes `chunk` `times` times without reading, as fast as the socket takes it, until it closes. */
async function flood(socket: net.Socket, chunk: Buffer, times: number): Promise<void> {
  for (let i = 0; i < times && !socket.destroyed; i++) {
    if (!socket.write(chunk)) {
      await Promise.race([
        new Promise((resolve) => socket.once('drain', resolve)),
        new Promise((resolve) => socket.once('close', resolve)),
        new Promise((resolve) => setTimeout(resolve, 2_000)),
      ]);
    }
  }
}

async function servedMeanwhile(port: number): Promise<void> {
  const client = greeterClient(`127.0.0.1:${port}`);
  clients.push(client);
  const answer = await unary<{ message: string }>(client, 'sayHello', { name: 'bystander' });
  expect(answer.value).toEqual({ message: 'hello bystander' });
}

describe('hostile: HTTP/2 floods on the gRPC entry', () => {
  it('a SETTINGS flood (acknowledgements never read) is closed, naming the peer', async () => {
    const { app, lines } = await provider();
    const socket = await rawH2(app.grpcPort!);
    sockets.push(socket);
    socket.on('error', () => {});
    socket.pause();
    const peer = `127.0.0.1:${socket.localPort}`;
    const settings = frame(FrameType.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100]));
    await flood(socket, Buffer.concat(Array.from({ length: 1_000 }, () => settings)), 2_000);
    expect(await closedWithin(socket, 10_000)).toBe(true);
    await waitFor(() => lines.some((line) => line.includes(peer) && /flood/i.test(line)));
    await servedMeanwhile(app.grpcPort!);
  }, 60_000);

  it('a PING flood (acknowledgements never read) is closed, naming the peer', async () => {
    const { app, lines } = await provider();
    const socket = await rawH2(app.grpcPort!);
    sockets.push(socket);
    socket.on('error', () => {});
    socket.pause();
    const peer = `127.0.0.1:${socket.localPort}`;
    const ping = frame(FrameType.PING, 0, 0, Buffer.alloc(8, 7));
    await flood(socket, Buffer.concat(Array.from({ length: 1_000 }, () => ping)), 2_000);
    expect(await closedWithin(socket, 10_000)).toBe(true);
    await waitFor(() => lines.some((line) => line.includes(peer) && /flood/i.test(line)));
    await servedMeanwhile(app.grpcPort!);
  }, 60_000);

  it('rapid reset (CVE-2023-44487): streams opened and reset in a burst close the connection', async () => {
    const { app, lines } = await provider();
    const socket = await rawH2(app.grpcPort!);
    sockets.push(socket);
    socket.on('error', () => {});
    socket.resume();
    const peer = `127.0.0.1:${socket.localPort}`;
    const block = grpcRequestBlock('/callisto.test.Greeter/slow');
    const cancel = Buffer.alloc(4);
    cancel.writeUInt32BE(8); // CANCEL
    const burst: Buffer[] = [];
    for (let id = 1; id < 2 * 20_000; id += 2) {
      burst.push(
        frame(FrameType.HEADERS, Flag.END_HEADERS, id, block),
        frame(FrameType.RST_STREAM, 0, id, cancel),
      );
    }
    await flood(socket, Buffer.concat(burst), 1);
    expect(await closedWithin(socket, 10_000)).toBe(true);
    await waitFor(() => lines.some((line) => line.includes(peer) && line.includes('rapid reset')));
    expect(lines.filter((line) => line.includes(peer)).length).toBeLessThan(5);
    await servedMeanwhile(app.grpcPort!);
  }, 60_000);
});
