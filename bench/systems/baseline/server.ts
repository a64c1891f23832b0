/**
 * The baseline server: raw node:net, length-prefixed JSON frames, the shared bench service, one
 * response frame per request, responses batched per tick; `ticks` opens a server stream
 * (server-streams.ts); a raw-bytes frame is an `echoBytes` call, answered in a raw-bytes frame.
 */
import { createServer, type Socket } from 'node:net';
import { type BenchService, benchBytesService, benchService } from '../../lib/scenarios.js';
import { runServerMain } from '../../lib/server-main.js';
import { type BaselineRequest, CANCEL_METHOD, createBatchedWriter, createFrameReader } from './framing.js';
import { createServerStreams } from './server-streams.js';

type Handler = (...args: never[]) => Promise<unknown>;

const handlers = new Map<string, Handler>(
  (Object.keys(benchService) as Array<keyof BenchService>).map((name) => [
    name,
    benchService[name].bind(benchService) as Handler,
  ]),
);

function serve(socket: Socket): void {
  const send = createBatchedWriter(socket);
  const streams = createServerStreams(socket, send);
  const read = createFrameReader(
    (message) => {
      const { id, method, args } = message as BaselineRequest;
      if (method === 'ticks') {
        streams.open(id, Number(args[0]));
        return;
      }
      if (method === CANCEL_METHOD) {
        streams.cancel(Number(args[0]));
        return;
      }
      const handler = handlers.get(method);
      if (handler === undefined) {
        send({ id, error: `no method ${method}` });
        return;
      }
      handler(...(args as never[])).then(
        (result) => send({ id, result }),
        (error: unknown) => send({ id, error: String(error) }),
      );
    },
    ({ id, bytes }) => {
      benchBytesService.echoBytes(bytes).then(
        (result) => send.bytes(id, result),
        (error: unknown) => send({ id, error: String(error) }),
      );
    },
  );
  socket.on('data', (chunk: Buffer) => {
    try {
      read(chunk);
    } catch {
      socket.destroy();
    }
  });
  socket.on('error', () => socket.destroy());
}

await runServerMain(async () => {
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no TCP address');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
});
