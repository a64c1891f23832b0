/**
 * The provider's TCP server: accepts connections and serves them from a service table. Shutdown is in
 * steps the app drives: `refuse()` (new calls get Shutdown errors), `goAway()` (tell consumers, also
 * those connecting from now on), `drain(timeoutMs)` (wait for calls in flight), `close()` (close every
 * connection once its consumer has closed its side, or after a grace period). `destroy()` is immediate.
 */
import net from 'node:net';
import { RpcError } from '../core/rpc-error.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ServiceTable } from '../service/service-table.js';
import { type ServerConnection, type ServerContext, serveConnection } from './server-connection.js';
import type { ServerOptions } from './server-options.js';

export interface RpcServer {
  /** The port listened on (the real one when configured as 0). */
  readonly port: number;
  readonly host: string;
  /** Calls executing now. */
  readonly active: number;
  readonly connectionCount: number;
  listen(): Promise<void>;
  /** From now on, new calls are answered with a Shutdown error. */
  refuse(): void;
  /** Sends every connected consumer a "going away" event. */
  goAway(): void;
  /** Resolves when no call is executing, or after `timeoutMs`; resolves true when drained. */
  drain(timeoutMs: number): Promise<boolean>;
  /** Answers every call still executing with a Shutdown error. */
  abandonInFlight(): void;
  /**
   * Stops listening and closes every connection gracefully: consumers are told "going away" (if not
   * yet), get every answer, and close their side; one that has not within 1 s is cut off. Idempotent.
   */
  close(): Promise<void>;
  /** Stops listening and destroys every connection at once. */
  destroy(): void;
}

export interface RpcServerHooks {
  onProtocolError?(remote: string, error: unknown): void;
}

export function createRpcServer(
  table: ServiceTable,
  serializers: readonly Serializer[],
  options: ServerOptions,
  hooks: RpcServerHooks = {},
): RpcServer {
  const accepted: (Serializer | undefined)[] = new Array(256).fill(undefined);
  for (const serializer of serializers) {
    if (!options.serializers || options.serializers.includes(serializer.name))
      accepted[serializer.id] = serializer;
  }
  const fallbackSerializer = serializers.find((s) => s.name === 'json') ?? serializers[0]!;
  const connections = new Set<ServerConnection>();
  const idleWaiters: Array<() => void> = [];
  const ctx: ServerContext = {
    table,
    options,
    serializers: accepted,
    fallbackSerializer,
    active: 0,
    refusing: false,
    onIdle() {
      for (const wake of idleWaiters.splice(0)) wake();
    },
    onProtocolError(remote, error) {
      hooks.onProtocolError?.(remote, error);
    },
  };
  let goingAway = false;
  const server = net.createServer((socket) => {
    const connection = serveConnection(socket, ctx, () => connections.delete(connection));
    connections.add(connection);
    // A consumer reconnecting while we shut down learns it at once.
    if (goingAway) connection.goAway();
  });
  let port = options.port;
  let closed: Promise<void> | undefined;

  return {
    get port() {
      return port;
    },
    host: options.host,
    get active() {
      return ctx.active;
    },
    get connectionCount() {
      return connections.size;
    },
    listen() {
      return new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          const address = server.address();
          if (address && typeof address === 'object') port = address.port;
          resolve();
        });
      });
    },
    refuse() {
      ctx.refusing = true;
    },
    goAway() {
      goingAway = true;
      for (const connection of connections) connection.goAway();
    },
    drain(timeoutMs) {
      if (ctx.active === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(ctx.active === 0), timeoutMs);
        idleWaiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
    abandonInFlight() {
      // `started`: the call may have had effects, so only idempotent calls may be repeated elsewhere.
      const error = new RpcError('Shutdown', 'provider shut down before this call completed', {
        details: { started: true },
      });
      for (const connection of connections) connection.abandon(error);
    },
    close() {
      closed ??= (async () => {
        goingAway = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await Promise.all([...connections].map((connection) => connection.end(1_000)));
        await stopped;
      })();
      return closed;
    },
    destroy() {
      goingAway = true;
      closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of connections) connection.destroy();
    },
  };
}
