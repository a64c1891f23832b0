/**
 * A plain socket that speaks frames, with nothing of Callisto's client in between: it writes requests
 * and heartbeats with the real frame writer and decodes whatever comes back, keeping every frame. For
 * tests that must see exactly what a provider sends (or does not), or must stop reading.
 */
import type { Frame } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter, type FrameWriter } from '../../src/protocol/frame-writer.js';
import { encodeRoutePrefix } from '../../src/protocol/metadata.js';
import { createTcpTransport } from '../../src/transport/tcp.js';
import type { ByteStream, Transport } from '../../src/transport/transport.js';
import { msgpack } from './raw-client.js';

/** What a test keeps of a received frame (the decoder's views are only valid during the callback). */
export interface SeenFrame {
  kind: number;
  flags: number;
  status: number;
  /** Byte 7: the compressor id (of a compressed body, or the one a request takes answers in). */
  compressor: number;
  requestId: number;
  body: Buffer;
}

export interface RawFrameSocket {
  readonly socket: ByteStream;
  readonly writer: FrameWriter;
  /** Every frame received so far, in order. */
  readonly frames: SeenFrame[];
  /** Queues a request (msgpack arguments) for `service` 1.0.0 `method`; sent at the end of the tick. */
  request(
    id: number,
    service: string,
    method: string,
    args: unknown[],
    flags?: number,
    wire?: { compressor?: number; body?: Uint8Array },
  ): void;
  /** Queues a heartbeat ping carrying `id`. */
  ping(id: number): void;
  /** Resolves with the frames received up to and including the first one `match` accepts. */
  until(match: (frame: SeenFrame) => boolean): Promise<SeenFrame[]>;
  close(): void;
}

/** Connects to `host:port` (or `<transport>://host:port`) over `transport` (TCP by default). */
export async function rawFrameSocket(
  address: string,
  transport: Transport = createTcpTransport(),
): Promise<RawFrameSocket> {
  const [host, port] = address.replace(/^[a-z]+:\/\//, '').split(':');
  const socket = transport.connect({ host: host!, port: Number(port) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => {});
  const frames: SeenFrame[] = [];
  const waiters = new Set<() => void>();
  const decoder = createFrameDecoder((frame: Frame) => {
    frames.push({
      kind: frame.kind,
      flags: frame.flags,
      status: frame.status,
      compressor: frame.compressor,
      requestId: frame.requestId,
      body: Buffer.from(frame.body),
    });
    for (const wake of waiters) wake();
  });
  socket.on('data', (chunk: Uint8Array) => decoder.push(Buffer.from(chunk)));
  const writer = createFrameWriter({
    write: (batch) => {
      if (!socket.destroyed) socket.write(batch);
    },
    writeWithBody: (batch, body) => {
      if (socket.destroyed) return;
      socket.write(batch);
      socket.write(body);
    },
    get pendingBytes() {
      return socket.writableLength;
    },
  });
  return {
    socket,
    writer,
    frames,
    request(id, service, method, args, flags = 0, wire = {}) {
      const prefix = encodeRoutePrefix(service, '1.0.0', '', method);
      writer.request({
        requestId: id,
        flags,
        serializer: msgpack.id,
        routePrefix: prefix,
        timeoutMs: 10_000,
        attachments: undefined,
        compressor: wire.compressor,
        body: wire.body ?? msgpack.encode(args),
      });
    },
    ping(id) {
      writer.heartbeat(id, false);
    },
    until(match) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const index = frames.findIndex(match);
          if (index < 0) return;
          waiters.delete(check);
          resolve(frames.slice(0, index + 1));
        };
        waiters.add(check);
        socket.once('close', () => {
          if (waiters.delete(check)) reject(new Error('connection closed before the expected frame'));
        });
        check();
      });
    },
    close() {
      socket.destroy();
    },
  };
}
