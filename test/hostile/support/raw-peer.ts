/**
 * A hostile peer on a plain socket, bound to a loopback address of its own (127.0.0.2, ...) so that a
 * provider's per-address limits tell it apart from the well-behaved client on 127.0.0.1. It writes
 * whatever bytes it is given and collects the frames it gets back.
 */
import net from 'node:net';
import { FrameKind } from '../../../src/protocol/frame.js';
import { createFrameDecoder } from '../../../src/protocol/frame-decoder.js';

export interface Answer {
  status: number;
  serializer: number;
  body: Buffer;
}

export interface RawPeer {
  readonly socket: net.Socket;
  /** Every response received, by request id: its status byte, serializer and body. */
  readonly answers: Map<number, Answer>;
  /** Heartbeat frames received. */
  readonly heartbeats: number;
  readonly closed: boolean;
  /** Resolves once the other side closed (or this side destroyed) the connection. */
  readonly whenClosed: Promise<void>;
  /** Writes and resolves once the bytes are handed to the kernel. */
  write(bytes: Buffer): Promise<void>;
  /** Stops reading (a peer that never reads what it is sent). */
  stopReading(): void;
  destroy(): void;
}

const open = new Set<net.Socket>();

export function connectRawPeer(address: string, localAddress = '127.0.0.2'): Promise<RawPeer> {
  const [host, port] = address.split(':');
  return new Promise<RawPeer>((resolve, reject) => {
    const socket = net.connect({ host: host!, port: Number(port), localAddress });
    open.add(socket);
    const answers = new Map<number, Answer>();
    let heartbeats = 0;
    let closed = false;
    let markClosed: () => void = () => {};
    const whenClosed = new Promise<void>((done) => {
      markClosed = done;
    });
    const decoder = createFrameDecoder(
      (frame) => {
        if (frame.kind === FrameKind.Response) {
          answers.set(frame.requestId, {
            status: frame.status,
            serializer: frame.serializer,
            body: Buffer.from(frame.body),
          });
        } else if (frame.kind === FrameKind.Heartbeat) heartbeats++;
      },
      { maxFrameBytes: 64 * 1024 * 1024 },
    );
    socket.on('data', (chunk: Buffer) => {
      try {
        decoder.push(chunk);
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      open.delete(socket);
      markClosed();
    });
    socket.once('connect', () =>
      resolve({
        socket,
        answers,
        get heartbeats() {
          return heartbeats;
        },
        get closed() {
          return closed;
        },
        whenClosed,
        write: (bytes) =>
          new Promise<void>((done) => {
            if (closed) done();
            else socket.write(bytes, () => done());
          }),
        stopReading: () => socket.pause(),
        destroy: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

/** Destroys every raw peer still open (afterEach). */
export function destroyRawPeers(): void {
  for (const socket of open) socket.destroy();
  open.clear();
}

/** Connects `count` peers, spread over `addresses`, a few at a time. */
export async function connectMany(address: string, count: number, addresses: string[]): Promise<RawPeer[]> {
  const peers: RawPeer[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) =>
      connectRawPeer(address, addresses[(i + j) % addresses.length]),
    );
    peers.push(...(await Promise.all(batch)));
  }
  return peers;
}
