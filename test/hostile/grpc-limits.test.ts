/**
 * Input that costs the gRPC entry no more than it sends, over real sockets: a header list over
 * `server.grpc.maxHeaderListBytes` (sent plainly, and as an HPACK bomb: one large header in the
 * dynamic table referenced many times, a few bytes each), a length prefix claiming 4 GiB (refused from
 * its 5 bytes), a client that sends part of the preface and stops, and a stream whose client never
 * reads (reset after `server.grpc.stalledStreamTimeoutMs`). Refusals are logged naming the peer; a
 * well-behaved client is served on.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, defineService, type Logger } from '../../src/index.js';
import { GreeterDef, greeterClient, greeterImpl, newSeen, unary } from '../grpc/greeter.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import {
  closedWithin,
  Flag,
  FrameType,
  frame,
  grpcRequestBlock,
  indexed,
  indexedLiteral,
  literal,
  PREFACE,
  rawH2,
} from './support/h2-frames.js';

const sockets: net.Socket[] = [];
// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients
const clients: any[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const client of clients.splice(0)) client.close();
  await closeAll();
});

let seen = newSeen();
async function provider(options: AppOptions = {}) {
  seen = newSeen();
  const lines: string[] = [];
  const keep = (message: string) => lines.push(message);
  const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
  const app = await testApp({ logger, ...options });
  app.provide(GreeterDef, greeterImpl(seen));
  await app.start();
  return { app, lines };
}

async function servedMeanwhile(port: number): Promise<void> {
  const client = greeterClient(`127.0.0.1:${port}`);
  clients.push(client);
  const answer = await unary<{ message: string }>(client, 'sayHello', { name: 'bystander' });
  expect(answer.value).toEqual({ message: 'hello bystander' });
}

/** Reads frames from `socket` and resolves with the first RST_STREAM or GOAWAY for stream `id` (or 0). */
function refusal(socket: net.Socket, id: number): Promise<string> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) break;
        const type = buffered[3];
        const stream = buffered.readUInt32BE(5) & 0x7fffffff;
        if (type === FrameType.RST_STREAM && stream === id) resolve('RST_STREAM');
        if (type === FrameType.GOAWAY) resolve('GOAWAY');
        if (type === FrameType.HEADERS && stream === id) resolve('HEADERS');
        buffered = buffered.subarray(9 + length);
      }
    });
    socket.once('close', () => resolve('closed'));
  });
}

describe('hostile: gRPC entry limits', () => {
  it('a header list over maxHeaderListBytes is refused before the call, logged naming the peer', async () => {
    const { app, lines } = await provider({ server: { grpc: { maxHeaderListBytes: 4096 } } } as AppOptions);
    const socket = await rawH2(app.grpcPort!);
    sockets.push(socket);
    socket.on('error', () => {});
    const peer = `127.0.0.1:${socket.localPort}`;
    const answered = refusal(socket, 1);
    // 8 KiB of header value, in one HEADERS frame (under the 16 KiB frame size)
    const block = grpcRequestBlock('/callisto.test.Greeter/sayHello', [
      literal('x-big', 'a'.repeat(8 * 1024)),
    ]);
    socket.write(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, block));
    await answered;
    await waitFor(() => lines.some((line) => line.includes(peer) && line.includes('maxHeaderListBytes')));
    expect(seen.attachments).toHaveLength(0);
    await servedMeanwhile(app.grpcPort!);
  });

  it('an HPACK bomb (one large header referenced many times) is refused at the decompressed size', async () => {
    const { app, lines } = await provider();
    const socket = await rawH2(app.grpcPort!);
    sockets.push(socket);
    socket.on('error', () => {});
    const peer = `127.0.0.1:${socket.localPort}`;
    const answered = refusal(socket, 1);
    // 4 KB enters the dynamic table once (index 62), then 200 one-byte references: 800 KB decompressed
    // from 4.2 KB sent (under the 256 header pairs node takes at most)
    const bomb = Buffer.concat([
      indexedLiteral('x-bomb', 'b'.repeat(4000)),
      ...Array.from({ length: 200 }, () => indexed(62)),
    ]);
    const block = Buffer.concat([grpcRequestBlock('/callisto.test.Greeter/sayHello'), bomb]);
    socket.write(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, 1, block));
    await answered;
    await waitFor(() => lines.some((line) => line.includes(peer) && line.includes('maxHeaderListBytes')));
    expect(seen.attachments).toHaveLength(0);
    await servedMeanwhile(app.grpcPort!);
  });

  it('a length prefix over maxMessageBytes is refused from its 5 bytes: RESOURCE_EXHAUSTED, logged', async () => {
    const { app, lines } = await provider();
    const session = http2.connect(`http://127.0.0.1:${app.grpcPort}`);
    session.on('error', () => {});
    const stream = session.request({
      ':method': 'POST',
      ':path': '/callisto.test.Greeter/sayHello',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    const prefix = Buffer.from([0, 0xff, 0xff, 0xff, 0xff]);
    stream.write(prefix);
    const status = await new Promise<string | undefined>((resolve) => {
      stream.on('response', (headers) => {
        if (headers['grpc-status'] !== undefined) resolve(headers['grpc-status'] as string);
      });
      stream.on('trailers', (trailers) => resolve(trailers['grpc-status'] as string));
      stream.on('close', () => resolve(undefined));
    });
    expect(status).toBe('8');
    await waitFor(() =>
      lines.some((line) => line.includes('maxMessageBytes') && line.includes('127.0.0.1:')),
    );
    session.destroy();
    await servedMeanwhile(app.grpcPort!);
  });

  it('part of the preface, then nothing: the connection is closed at frameTimeoutMs, naming the peer', async () => {
    const { app, lines } = await provider({ frameTimeoutMs: 300 } as AppOptions);
    const socket = net.connect(app.grpcPort!, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    const peer = `127.0.0.1:${socket.localPort}`;
    socket.write(PREFACE.subarray(0, 10));
    expect(await closedWithin(socket, 10_000)).toBe(true);
    await waitFor(() => lines.some((line) => line.includes(peer) && line.includes('preface')));
    await servedMeanwhile(app.grpcPort!);
  });

  it('a stream whose client never reads is reset after stalledStreamTimeoutMs, logged; others are served', async () => {
    const Flood = defineService<{ flood(): AsyncIterable<string> }>('callisto.test.Flood', {
      methods: { flood: { stream: 'server' } },
    });
    let finished = false;
    const { app, lines } = await provider({
      server: { grpc: { stalledStreamTimeoutMs: 500 } },
    } as AppOptions);
    app.provide(Flood, {
      async *flood() {
        try {
          for (;;) yield 'x'.repeat(16 * 1024);
        } finally {
          finished = true;
        }
      },
    });
    const session = http2.connect(`http://127.0.0.1:${app.grpcPort}`);
    session.on('error', () => {});
    const stream = session.request({
      ':method': 'POST',
      ':path': '/callisto.test.Flood/flood',
      'content-type': 'application/grpc+json',
      te: 'trailers',
    });
    stream.on('error', () => {});
    stream.end(Buffer.from([0, 0, 0, 0, 2, 0x5b, 0x5d]));
    stream.pause();
    await waitFor(() => finished, 10_000);
    await waitFor(() => lines.some((line) => line.includes('took no message')));
    await servedMeanwhile(app.grpcPort!);
    session.destroy();
  });
});
