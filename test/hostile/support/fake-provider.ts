/**
 * A fake provider for attacks on a consumer: it speaks just enough of the protocol to read requests,
 * and answers each with whatever frame the scenario builds (or does something else on connect).
 */
import net from 'node:net';
import { type Frame, FrameKind } from '../../../src/protocol/frame.js';
import { createFrameDecoder } from '../../../src/protocol/frame-decoder.js';

export interface FakeProvider {
  readonly address: string;
  /** Requests read so far. */
  readonly requests: number;
  /** Connections the consumer (or the peer) closed. */
  readonly closed: number;
  /** Connections accepted. */
  readonly accepted: number;
  close(): Promise<void>;
}

export interface FakeProviderScript {
  /** Called for every request; write the answer (or nothing) on `socket`. */
  onRequest?(socket: net.Socket, request: Frame): void;
  /** Called once a consumer connects. */
  onConnect?(socket: net.Socket): void;
}

const servers = new Set<net.Server>();
const sockets = new Set<net.Socket>();

export async function startFakeProvider(script: FakeProviderScript): Promise<FakeProvider> {
  let requests = 0;
  let closed = 0;
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      closed++;
      sockets.delete(socket);
    });
    const decoder = createFrameDecoder(
      (frame) => {
        if (frame.kind !== FrameKind.Request) return;
        requests++;
        script.onRequest?.(socket, frame);
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
    script.onConnect?.(socket);
  });
  servers.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get closed() {
      return closed;
    },
    get accepted() {
      return accepted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        servers.delete(server);
        server.close(() => resolve());
      }),
  };
}

/** Closes every fake provider and its connections (afterEach). */
export async function closeFakeProviders(): Promise<void> {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(
    [...servers].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
  );
  servers.clear();
}
