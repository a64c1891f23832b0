/**
 * The `tcp` transport: node:net. A socket is a ByteStream as it is (no wrapper on the hot path); Nagle is
 * off (frames are batched per tick above) and TCP keep-alive on for the consumer's long-lived
 * connections.
 */
import net from 'node:net';
import type { ByteStream, Transport, TransportListener } from './transport.js';

export function createTcpTransport(): Transport {
  return {
    name: 'tcp',
    connect({ host, port }) {
      return net.connect({ host, port, noDelay: true, keepAlive: true });
    },
    listen({ host, port }, onConnection) {
      const server = net.createServer((socket) => {
        socket.setNoDelay(true);
        onConnection(socket satisfies ByteStream);
      });
      return new Promise<TransportListener>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address();
          const listening = address !== null && typeof address === 'object' ? address.port : port;
          let closed: Promise<void> | undefined;
          resolve({
            port: listening,
            close: () => {
              closed ??= new Promise<void>((done) => server.close(() => done()));
              return closed;
            },
          });
        });
      });
    },
  };
}
