/**
 * The consumer's connections, one long-lived multiplexed connection per provider address, shared by
 * every reference of the app. A connection that is lost while its provider is still wanted (retained by
 * a directory) is re-opened with bounded exponential backoff and full jitter, so a mass outage does not
 * end in a reconnect storm; until it is open again the address is not `available`. Connections unused
 * for `idleTimeoutMs` are closed and re-opened on demand.
 */
import type { RpcError } from '../core/rpc-error.js';
import type { Serializer } from '../serialization/serializer.js';
import { type ClientConnection, createClientConnection } from '../transport/client-connection.js';
import type { ConnectionOptions } from '../transport/transport-options.js';

export interface ConnectionPoolOptions {
  connection: ConnectionOptions;
  /** First reconnect delay. Default 200. */
  reconnectBaseMs: number;
  /** Largest reconnect delay. Default 10000. */
  reconnectMaxMs: number;
  /** Close connections unused this long. Default 600000 (10 min); 0 disables. */
  idleTimeoutMs: number;
}

export const DEFAULT_POOL_RECONNECT = {
  reconnectBaseMs: 200,
  reconnectMaxMs: 10_000,
  idleTimeoutMs: 600_000,
};

export interface PoolEvents {
  /** A provider announced shutdown over its connection. */
  onGoAway?(address: string): void;
  /** A connection closed; `error` is set when it was not closed by us. */
  onDisconnect?(address: string, error: RpcError | undefined): void;
  onConnect?(address: string): void;
}

interface Slot {
  host: string;
  port: number;
  connection: ClientConnection | undefined;
  retainers: number;
  failures: number;
  downUntil: number;
  reconnectTimer: NodeJS.Timeout | undefined;
  lastUsed: number;
  goneAway: boolean;
}

export interface ConnectionPool {
  /** The connection to `host:port`, opened on first use. */
  get(host: string, port: number): ClientConnection;
  /** Whether calls may be routed to `address` now (not backing off, not going away). */
  isAvailable(address: string): boolean;
  /** Marks an address as wanted (by a directory): it is reconnected after losses. */
  retain(host: string, port: number): void;
  release(address: string): void;
  /** Connections open now. */
  readonly size: number;
  connections(): ClientConnection[];
  /** Waits for in-flight calls on every connection, then closes them. */
  close(): Promise<void>;
  /** Closes every connection at once. */
  destroy(): void;
}

export function createConnectionPool(
  serializers: readonly (Serializer | undefined)[],
  options: ConnectionPoolOptions,
  events: PoolEvents = {},
): ConnectionPool {
  const slots = new Map<string, Slot>();
  let closing = false;
  let idleTimer: NodeJS.Timeout | undefined;

  const slotFor = (host: string, port: number): Slot => {
    const address = `${host}:${port}`;
    let slot = slots.get(address);
    if (slot === undefined) {
      slot = {
        host,
        port,
        connection: undefined,
        retainers: 0,
        failures: 0,
        downUntil: 0,
        reconnectTimer: undefined,
        lastUsed: 0,
        goneAway: false,
      };
      slots.set(address, slot);
    }
    return slot;
  };

  const scheduleReconnect = (address: string, slot: Slot): void => {
    if (closing || slot.retainers === 0 || slot.reconnectTimer !== undefined) return;
    const ceiling = Math.min(
      options.reconnectMaxMs,
      options.reconnectBaseMs * 2 ** Math.min(slot.failures, 16),
    );
    const delay = Math.floor(Math.random() * ceiling) + 1;
    slot.downUntil = Date.now() + delay;
    slot.reconnectTimer = setTimeout(() => {
      slot.reconnectTimer = undefined;
      if (closing || slot.retainers === 0) return;
      open(address, slot);
    }, delay);
    slot.reconnectTimer.unref();
  };

  const open = (address: string, slot: Slot): ClientConnection => {
    slot.goneAway = false;
    const connection = createClientConnection(slot.host, slot.port, serializers, options.connection, {
      onGoAway: () => {
        slot.goneAway = true;
        events.onGoAway?.(address);
      },
      onClose: (_closed, error, local) => {
        if (slot.connection === connection) slot.connection = undefined;
        // A provider that announced it was going away closing its connection is expected, not a failure.
        const byUs = closing || local;
        events.onDisconnect?.(address, byUs || slot.goneAway ? undefined : error);
        if (byUs) return;
        slot.failures++;
        scheduleReconnect(address, slot);
      },
    });
    connection.ready().then(
      () => {
        slot.failures = 0;
        slot.downUntil = 0;
        events.onConnect?.(address);
      },
      () => {},
    );
    slot.connection = connection;
    ensureIdleSweep();
    return connection;
  };

  const ensureIdleSweep = (): void => {
    if (idleTimer !== undefined || options.idleTimeoutMs <= 0) return;
    idleTimer = setInterval(
      () => {
        const cutoff = Date.now() - options.idleTimeoutMs;
        for (const slot of slots.values()) {
          const connection = slot.connection;
          const lastUsed = Math.max(slot.lastUsed, connection?.lastActivity ?? 0);
          if (connection && connection.inFlight === 0 && lastUsed < cutoff) {
            slot.connection = undefined;
            void connection.close();
          }
        }
      },
      Math.max(1_000, Math.floor(options.idleTimeoutMs / 4)),
    );
    idleTimer.unref();
  };

  return {
    get(host, port) {
      const address = `${host}:${port}`;
      const slot = slots.get(address) ?? slotFor(host, port);
      const connection = slot.connection;
      if (connection !== undefined && connection.state !== 'closed') return connection;
      slot.lastUsed = Date.now();
      if (slot.reconnectTimer !== undefined) {
        clearTimeout(slot.reconnectTimer);
        slot.reconnectTimer = undefined;
      }
      return open(address, slot);
    },
    isAvailable(address) {
      const slot = slots.get(address);
      if (slot === undefined) return true;
      if (slot.goneAway) return false;
      if (slot.connection === undefined || slot.connection.state === 'closed')
        return slot.downUntil <= Date.now();
      return slot.connection.state !== 'draining';
    },
    retain(host, port) {
      slotFor(host, port).retainers++;
    },
    release(address) {
      const slot = slots.get(address);
      if (slot === undefined) return;
      slot.retainers = Math.max(0, slot.retainers - 1);
      if (slot.retainers === 0) {
        if (slot.reconnectTimer !== undefined) clearTimeout(slot.reconnectTimer);
        slot.reconnectTimer = undefined;
        const connection = slot.connection;
        slots.delete(address);
        if (connection) void connection.close();
      }
    },
    get size() {
      let count = 0;
      for (const slot of slots.values()) if (slot.connection) count++;
      return count;
    },
    connections() {
      return [...slots.values()].flatMap((slot) => (slot.connection ? [slot.connection] : []));
    },
    async close() {
      closing = true;
      if (idleTimer !== undefined) clearInterval(idleTimer);
      const all = [...slots.values()];
      for (const slot of all) if (slot.reconnectTimer !== undefined) clearTimeout(slot.reconnectTimer);
      await Promise.all(all.map((slot) => slot.connection?.close()));
      slots.clear();
    },
    destroy() {
      closing = true;
      if (idleTimer !== undefined) clearInterval(idleTimer);
      for (const slot of slots.values()) {
        if (slot.reconnectTimer !== undefined) clearTimeout(slot.reconnectTimer);
        slot.connection?.destroy();
      }
      slots.clear();
    },
  };
}
