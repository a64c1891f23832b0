/**
 * Connection caps of an HTTP listener (the admin port, the gateway, the dashboard; the provider's entry
 * counts against `server.maxConnections` instead): at most `maxConnections` at once, and at most
 * `maxConnectionsPerAddress` from one remote address, so that one client holding idle or half-open
 * connections cannot take every place (a liveness probe refused is a restarted process).
 * A connection over a cap is closed as it arrives; a place is given back when its connection closes.
 */
import type { Socket } from 'node:net';

export interface ConnectionCapOptions {
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
}

export interface ConnectionCaps {
  /** Counts `socket` in, or returns why it is refused (it is then not counted). */
  admit(socket: Socket): string | undefined;
  /** Connections counted now. */
  readonly connections: number;
}

/** `where`: the configuration prefix the caps' keys are named under in messages (`admin`, `createGateway`). */
export function createConnectionCaps(options: ConnectionCapOptions, where: string): ConnectionCaps {
  const perAddress = new Map<string, number>();
  let connections = 0;
  return {
    admit(socket) {
      if (connections >= options.maxConnections) {
        return `${connections} connections open, the maximum (${where}.maxConnections)`;
      }
      const address = socket.remoteAddress ?? '';
      const open = perAddress.get(address) ?? 0;
      if (open >= options.maxConnectionsPerAddress) {
        return `${open} connections from ${address} open, the maximum per address (${where}.maxConnectionsPerAddress)`;
      }
      perAddress.set(address, open + 1);
      connections++;
      socket.once('close', () => {
        connections--;
        const left = perAddress.get(address)! - 1;
        if (left === 0) perAddress.delete(address);
        else perAddress.set(address, left);
      });
      return undefined;
    },
    get connections() {
      return connections;
    },
  };
}
