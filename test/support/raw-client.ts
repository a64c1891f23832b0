import net from 'node:net';
import { createClientConnection } from '../../src/consumer/client-connection.js';
import type { ClientConnection } from '../../src/consumer/connection.js';
import type { WireRoute } from '../../src/consumer/pending-call.js';
import { DEFAULT_CONNECTION_OPTIONS } from '../../src/protocol/connection-options.js';
import { encodeRoutePrefix } from '../../src/protocol/metadata.js';
import { createJsonSerializer } from '../../src/serialization/json.js';
import { createMsgpackSerializer } from '../../src/serialization/msgpack.js';
import type { Serializer } from '../../src/serialization/serializer.js';
import { createV8Serializer } from '../../src/serialization/v8.js';
import { createTcpTransport } from '../../src/transport/tcp.js';

export const msgpack = createMsgpackSerializer();
const table: (Serializer | undefined)[] = [];
for (const s of [createJsonSerializer(), msgpack, createV8Serializer()]) table[s.id] = s;

/** A bare protocol connection, to send what a typed reference never would. */
export function rawConnection(address: string): ClientConnection {
  const [host, port] = address.split(':');
  return createClientConnection(
    { transport: createTcpTransport(), host: host!, port: Number(port) },
    table,
    DEFAULT_CONNECTION_OPTIONS,
  );
}

export function route(
  service: string,
  method: string,
  serializer: Serializer = msgpack,
  version = '1.0.0',
): WireRoute {
  return {
    prefix: encodeRoutePrefix(service, version, '', method),
    serializer,
    label: `${service}.${method}`,
  };
}

/** Opens a plain socket, writes `bytes`, and resolves when the server closes it (or after `ms`). */
export function sendGarbage(address: string, bytes: Buffer, ms = 2_000): Promise<'closed' | 'open'> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = net.connect({ host: host!, port: Number(port) }, () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('open');
    }, ms);
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve('closed');
    });
  });
}
