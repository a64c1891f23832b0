/**
 * The consumer's connections, one long-lived multiplexed connection per provider address, shared by
 * every reference of the app. A connection that is lost while its provider is still wanted (retained by
 * a directory) is re-opened with bounded exponential backoff and full jitter, so a mass outage does not
 * end in a reconnect storm; until it is open again the address is not `available`. Connections unused
 * for `idleTimeoutMs` are closed and re-opened on demand: "unused" means no call sent or in flight
 * (heartbeats keep a connection alive, not in use). Partial answer frames of every connection draw on
 * one budget (`maxPartialFrameBytes`).
 *
 * A provider that said "going away" is not reconnected to: it is gone until a registry announces it
 * again (`renew`, a new process on the same address) or a call with nowhere else to go finds it back.
 * Such calls, like calls to an address backing off after a failure, open at most one connection per
 * `reconnectBaseMs`; the others fail at once, never sent. `connection()` never throws: a connection that
 * cannot even be started (`net.connect` throwing, e.g. on a port out of range) is a Network error,
 * never sent, so any method fails over.
 *
 * Callers on the hot path keep a `PoolHandle` per address: its `available` flag and `connection()` cost a
 * property read, not a map lookup.
 */
import { messageOf, RpcError } from '../core/rpc-error.js';
import { createByteBudget } from '../protocol/byte-budget.js';
import { type ConnectionOptions, DEFAULT_STREAM_OPTIONS } from '../protocol/connection-options.js';
import { JSON_SERIALIZER_ID } from '../serialization/json.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ClientTlsOptions } from '../transport/tls-options.js';
import { DEFAULT_TRANSPORT, type Transport, transportAddress } from '../transport/transport.js';
import { createClientConnection } from './client-connection.js';
import type { ClientConnection, ConnectionEvents } from './connection.js';
import { createFailedConnection } from './failed-connection.js';
import { createGrpcConnection, isGrpcTransport } from './grpc-connection.js';
import { createHttpConnection, isHttpTransport } from './http-connection.js';

export interface ConnectionPoolOptions {
  connection: ConnectionOptions;
  /** The transport of a provider record's `transport` name (`tcp` when the record names none). */
  transport: (name: string) => Transport;
  /** First reconnect delay ceiling, ms. */
  reconnectBaseMs: number;
  /** Largest reconnect delay, ms. */
  reconnectMaxMs: number;
  /** Close connections unused this long, ms (`consumer.idleTimeoutMs`); 0 disables. */
  idleTimeoutMs: number;
  /**
   * `consumer.tls`, resolved: how an `https` endpoint (a provider's HTTPS entry, for `protocol: 'http'`
   * references) and a `grpcs` one (a gRPC server over TLS, `protocol: 'grpc'`) are verified; without it
   * such calls fail, never sent, naming the key.
   */
  httpTls?: ClientTlsOptions | undefined;
}

/** Reconnect backoff of the consumer's pool: ceilings from 200 ms, doubling, up to 10 s (with full jitter). */
export const POOL_RECONNECT = {
  reconnectBaseMs: 200,
  reconnectMaxMs: 10_000,
} as const;

export interface PoolEvents {
  /** A provider announced shutdown over its connection. */
  onGoAway?(address: string): void;
  /** A connection closed; `error` is set when that was unexpected. */
  onDisconnect?(address: string, error: RpcError | undefined): void;
  onConnect?(address: string): void;
  /** No directory wants `address` any more; its slot is gone. */
  onRelease?(address: string): void;
  /** A heartbeat round trip was measured; `load` is the provider's load report the pong carried. */
  onHeartbeatRtt?(address: string, rttMs: number, load: string | undefined): void;
  /** An answer was refused for what it carried, or a connection closed for breaking the protocol. */
  onRefused?(address: string, reason: string): void;
  /** A connection went silent while calls waited: it takes no new attempt until something arrives. */
  onSuspect?(address: string, silentMs: number): void;
  /** A suspected connection was heard from again. */
  onSuspectCleared?(address: string): void;
}

/** One address of the pool, kept by whoever calls it often. */
export interface PoolHandle {
  readonly address: string;
  /** Whether calls may be routed here now: not backing off after a loss, not going away. */
  readonly available: boolean;
  /** The open connection, opening one if needed. */
  connection(): ClientConnection;
}

export interface ConnectionPool {
  /** The handle of `host:port` over `transport` (default `tcp`); its connection opens on first use. */
  handle(host: string, port: number, transport?: string): PoolHandle;
  isAvailable(address: string): boolean;
  /**
   * Whether `address` has an open connection whose provider has not said "going away" (what empty-list
   * protection counts as healthy; an address never connected to is not).
   */
  isHealthy(address: string): boolean;
  /** Called when a connection closes or its provider says "going away". */
  onHealthChange(listener: (address: string) => void): () => void;
  /** Marks an address as wanted (by a directory): it is reconnected after losses. */
  retain(host: string, port: number, transport?: string): void;
  release(address: string): void;
  /**
   * A registry announced the provider at `address` anew (a new process): forget that the previous one
   * said "going away" or failed, so calls may go there at once.
   */
  renew(address: string): void;
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
  const healthListeners = new Set<(address: string) => void>();
  let closing = false;
  let idleTimer: NodeJS.Timeout | undefined;
  const partialFrames = createByteBudget(options.connection.maxPartialFrameBytes);

  const healthChanged = (address: string): void => {
    for (const listener of healthListeners) listener(address);
  };

  class Slot implements PoolHandle {
    readonly address: string;
    current: ClientConnection | undefined = undefined;
    retainers = 0;
    failures = 0;
    downUntil = 0;
    reconnectTimer: NodeJS.Timeout | undefined = undefined;
    lastUsed = 0;
    /** The provider said "going away": no reconnects until renewed or found back. */
    goneAway = false;
    /** Before this (ms), a call finding no connection fails at once instead of opening one. */
    nextAttemptAt = 0;

    constructor(
      readonly host: string,
      readonly port: number,
      readonly transport: string,
    ) {
      this.address = transportAddress(host, port, transport);
    }

    get available(): boolean {
      if (this.goneAway) return false;
      const connection = this.current;
      if (connection === undefined) return this.reconnectTimer === undefined && this.downUntil <= Date.now();
      // A first connection may take calls while it connects; a reconnect after a loss may not: the
      // provider may well be dead, and every call routed to it would only be refused.
      if (connection.state.kind === 'connecting') return this.failures === 0;
      return connection.state.kind === 'open' && !connection.suspected;
    }

    connection(): ClientConnection {
      const connection = this.current;
      if (connection !== undefined && connection.state.kind !== 'closed') return connection;
      const now = Date.now();
      this.lastUsed = now;
      if ((this.goneAway || this.failures > 0) && now < this.nextAttemptAt) return this.refusal();
      if (this.reconnectTimer !== undefined) {
        clearTimeout(this.reconnectTimer);
        this.reconnectTimer = undefined;
      }
      return this.open();
    }

    /** What a call gets while no new connection may be tried yet: an error, never sent. */
    refusal(): ClientConnection {
      const error = this.goneAway
        ? new RpcError('Shutdown', `${this.address} said it is going away`, { neverSent: true })
        : new RpcError(
            'Network',
            `no connection to ${this.address} (${this.failures} failed attempt${this.failures === 1 ? '' : 's'}; retrying)`,
            { neverSent: true },
          );
      return createFailedConnection(this.address, error);
    }

    open(): ClientConnection {
      this.nextAttemptAt = Date.now() + options.reconnectBaseMs;
      let saidGoodbye = false;
      let connection: ClientConnection;
      try {
        const connectionEvents: ConnectionEvents = {
          onGoAway: (_c, addressStays) => {
            saidGoodbye = true;
            if (this.current !== connection) return;
            if (addressStays) {
              // another process serves the address: new calls go on a new connection to it
              this.current = undefined;
              return;
            }
            this.goneAway = true;
            events.onGoAway?.(this.address);
            healthChanged(this.address);
          },
          onHeartbeatRtt: (_c, rttMs, load) => events.onHeartbeatRtt?.(this.address, rttMs, load),
          onSuspect: (_c, silentMs) => {
            events.onSuspect?.(this.address, silentMs);
            healthChanged(this.address);
          },
          onSuspectCleared: () => {
            events.onSuspectCleared?.(this.address);
            healthChanged(this.address);
          },
          onClose: (_closed, error, local) => {
            if (this.current === connection) this.current = undefined;
            const byUs = closing || local;
            // A provider that said it was going away closing its connection is expected, not a failure;
            // nor are failed attempts to find it back.
            const expected = byUs || saidGoodbye || this.goneAway;
            events.onDisconnect?.(this.address, expected ? undefined : error);
            healthChanged(this.address);
            if (byUs) return;
            if (saidGoodbye) {
              this.nextAttemptAt = Date.now() + options.reconnectBaseMs;
              return;
            }
            this.failures++;
            if (!this.goneAway) this.scheduleReconnect();
          },
          onRefused: (_c, reason) => events.onRefused?.(this.address, reason),
        };
        connection = this.make(connectionEvents);
      } catch (error) {
        // Nothing was sent: any method may go elsewhere.
        const failure = new RpcError('Network', `cannot connect to ${this.address}: ${messageOf(error)}`, {
          cause: error,
          neverSent: true,
        });
        this.failures++;
        events.onDisconnect?.(this.address, failure);
        this.scheduleReconnect();
        return createFailedConnection(this.address, failure);
      }
      connection.ready().then(
        () => {
          this.failures = 0;
          this.downUntil = 0;
          if (this.current === connection && !saidGoodbye) this.goneAway = false;
          events.onConnect?.(this.address);
        },
        () => {},
      );
      this.current = connection;
      ensureIdleSweep();
      return connection;
    }

    /** A connection of this slot's kind: framed over its transport, HTTP or gRPC (pseudo-transports). */
    make(connectionEvents: ConnectionEvents): ClientConnection {
      const { connection } = options;
      if (isHttpTransport(this.transport)) {
        return createHttpConnection({
          host: this.host,
          port: this.port,
          secure: this.transport === 'https',
          tls: options.httpTls,
          json: serializers[JSON_SERIALIZER_ID]!,
          maxBodyBytes: connection.maxFrameBytes,
          maxDecodedElements: connection.maxDecodedElements,
          connectTimeoutMs: connection.connectTimeoutMs,
          events: connectionEvents,
        });
      }
      if (isGrpcTransport(this.transport)) {
        const streams = connection.streams ?? DEFAULT_STREAM_OPTIONS;
        return createGrpcConnection({
          host: this.host,
          port: this.port,
          secure: this.transport === 'grpcs',
          tls: options.httpTls,
          json: serializers[JSON_SERIALIZER_ID]!,
          maxMessageBytes: connection.maxFrameBytes,
          maxStreamMessageBytes: streams.maxMessageBytes,
          maxDecodedElements: connection.maxDecodedElements,
          streamAheadBytes: streams.windowBytes,
          maxStreams: streams.maxStreamsPerConnection,
          connectTimeoutMs: connection.connectTimeoutMs,
          suspectAfterMs: connection.suspectAfterMs ?? 0,
          events: connectionEvents,
        });
      }
      return createClientConnection(
        { transport: options.transport(this.transport), host: this.host, port: this.port },
        serializers,
        connection,
        connectionEvents,
        partialFrames,
      );
    }

    /** Forgets a goodbye and past failures: the next call may connect at once. */
    renew(): void {
      this.stop();
      this.goneAway = false;
      this.failures = 0;
      this.downUntil = 0;
      this.nextAttemptAt = 0;
    }

    scheduleReconnect(): void {
      if (closing || this.retainers === 0 || this.reconnectTimer !== undefined) return;
      const ceiling = Math.min(
        options.reconnectMaxMs,
        options.reconnectBaseMs * 2 ** Math.min(this.failures, 16),
      );
      const delay = Math.floor(Math.random() * ceiling) + 1;
      this.downUntil = Date.now() + delay;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = undefined;
        if (!closing && this.retainers > 0 && this.current === undefined) this.open();
      }, delay);
      this.reconnectTimer.unref();
    }

    stop(): void {
      if (this.reconnectTimer !== undefined) clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
    }
  }

  const slotFor = (host: string, port: number, transport = DEFAULT_TRANSPORT): Slot => {
    const address = transportAddress(host, port, transport);
    let slot = slots.get(address);
    if (slot === undefined) {
      slot = new Slot(host, port, transport);
      slots.set(address, slot);
    }
    return slot;
  };

  /**
   * Closes connections with no call sent or in flight for `idleTimeoutMs`. Only calls count: heartbeat
   * pings and pongs flow on every idle connection and must not keep it open (with the defaults, a 30 s
   * heartbeat under a 600 s idle timeout, nothing would ever expire).
   */
  const ensureIdleSweep = (): void => {
    if (idleTimer !== undefined || options.idleTimeoutMs <= 0) return;
    idleTimer = setInterval(
      () => {
        const cutoff = Date.now() - options.idleTimeoutMs;
        for (const slot of slots.values()) {
          const connection = slot.current;
          if (connection === undefined || connection.inFlight > 0) continue;
          if (Math.max(slot.lastUsed, connection.lastCallAt) < cutoff) {
            slot.current = undefined;
            void connection.close();
          }
        }
      },
      Math.min(Math.max(1_000, Math.floor(options.idleTimeoutMs / 4)), 60_000),
    );
    idleTimer.unref();
  };

  return {
    handle: slotFor,
    isAvailable(address) {
      return slots.get(address)?.available ?? true;
    },
    isHealthy(address) {
      const slot = slots.get(address);
      return slot !== undefined && !slot.goneAway && slot.current?.state.kind === 'open';
    },
    onHealthChange(listener) {
      healthListeners.add(listener);
      return () => healthListeners.delete(listener);
    },
    renew(address) {
      slots.get(address)?.renew();
    },
    retain(host, port, transport) {
      slotFor(host, port, transport).retainers++;
    },
    release(address) {
      const slot = slots.get(address);
      if (slot === undefined) return;
      slot.retainers = Math.max(0, slot.retainers - 1);
      if (slot.retainers > 0) return;
      slot.stop();
      slots.delete(address);
      const connection = slot.current;
      slot.current = undefined;
      if (connection) void connection.close();
      events.onRelease?.(address);
    },
    get size() {
      let count = 0;
      for (const slot of slots.values()) if (slot.current) count++;
      return count;
    },
    connections() {
      return [...slots.values()].flatMap((slot) => (slot.current ? [slot.current] : []));
    },
    async close() {
      closing = true;
      if (idleTimer !== undefined) clearInterval(idleTimer);
      const all = [...slots.values()];
      for (const slot of all) slot.stop();
      await Promise.all(all.map((slot) => slot.current?.close()));
      slots.clear();
    },
    destroy() {
      closing = true;
      if (idleTimer !== undefined) clearInterval(idleTimer);
      for (const slot of slots.values()) {
        slot.stop();
        slot.current?.destroy();
      }
      slots.clear();
    },
  };
}
