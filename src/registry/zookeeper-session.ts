/**
 * One ZooKeeper session over `node-zookeeper-client` (which ships no types: the small part used here is
 * typed below), with promise-returning operations, our bounded exponential backoff between connection
 * attempts, and a close that leaves no socket or timer behind even while the server is away.
 */
import type { Socket } from 'node:net';
import type { Backoff } from './timing.js';

export interface ZkState {
  readonly name: string;
  readonly code: number;
}

export interface ZkStat {
  readonly ephemeralOwner: Buffer;
  /** The data version (compare-and-set: setData and remove with it). */
  readonly version: number;
}

export interface ZkEvent {
  readonly type: number;
  readonly path: string;
}

export type ZkWatcher = (event: ZkEvent) => void;
type Callback<T> = (error: (Error & { code?: number }) | null, result?: T, stat?: ZkStat) => void;

export interface ZkClient {
  connect(): void;
  close(): void;
  on(event: 'state', listener: (state: ZkState) => void): unknown;
  removeAllListeners(): unknown;
  getSessionId(): Buffer;
  create(path: string, data: Buffer, mode: number, callback: Callback<string>): void;
  mkdirp(path: string, callback: Callback<string>): void;
  remove(path: string, version: number, callback: Callback<void>): void;
  setData(path: string, data: Buffer, version: number, callback: Callback<ZkStat>): void;
  getData(path: string, watcher: ZkWatcher | undefined, callback: Callback<Buffer>): void;
  getChildren(path: string, watcher: ZkWatcher | undefined, callback: Callback<string[]>): void;
}

export interface ZkModule {
  createClient(
    connectionString: string,
    options: { sessionTimeout: number; spinDelay: number; retries: number },
  ): ZkClient;
  readonly CreateMode: { readonly EPHEMERAL: number; readonly PERSISTENT: number };
  readonly Exception: {
    readonly NO_NODE: number;
    readonly NODE_EXISTS: number;
    readonly NOT_EMPTY: number;
    readonly BAD_VERSION: number;
  };
  readonly State: {
    readonly SYNC_CONNECTED: ZkState;
    readonly DISCONNECTED: ZkState;
    readonly EXPIRED: ZkState;
    readonly AUTH_FAILED: ZkState;
  };
}

/** The library's connection manager, reached into for backoff and for a clean close. */
interface ZkConnectionManager {
  state: number;
  socket?: Socket;
  connectTimeoutHandler?: NodeJS.Timeout;
  servers?: unknown[];
  nextServerIndex?: number;
  findNextServer?: (callback: (server: unknown) => void) => void;
  on?(event: 'state', listener: (state: number) => void): unknown;
}

const MANAGER_CONNECTED = 2;
const MANAGER_CLOSING = -1;
const MANAGER_CLOSED = -2;

export interface ZkSession {
  readonly client: ZkClient;
  /** Whether `stat` describes an ephemeral node owned by this session. */
  owns(stat: ZkStat): boolean;
  /** Runs one callback-style operation; rejects if the session is discarded before it answers. */
  run<T>(operation: (callback: Callback<T>) => void): Promise<T>;
  /** Like `run`, also returning the stat. */
  runWithStat<T>(operation: (callback: Callback<T>) => void): Promise<[T, ZkStat | undefined]>;
  /** Marks the next successful connection, so the backoff starts again from its first step. */
  connected(): void;
  /** Closes the session (politely when connected) and releases its socket and timers. */
  close(timeoutMs: number): Promise<void>;
}

/** What a session is opened with. */
export interface ZkSessionInit {
  /** `host:port,host:port/chroot`, as the library takes it. */
  readonly connectionString: string;
  /** The session timeout asked of the servers. */
  readonly sessionTimeoutMs: number;
  /** The wait between connection attempts (reset on each successful connection). */
  readonly backoff: Backoff;
  /** Told each state the library reports (connected, disconnected, expired, auth failed). */
  readonly onState: (state: ZkState) => void;
  /** Told why each connection attempt failed (the library itself reports nothing before a first success). */
  readonly onAttemptFailed?: (reason: string) => void;
}

export function openZkSession(zk: ZkModule, init: ZkSessionInit): ZkSession {
  const { connectionString, sessionTimeoutMs, backoff, onState, onAttemptFailed = () => {} } = init;
  const client = zk.createClient(connectionString, {
    sessionTimeout: sessionTimeoutMs,
    spinDelay: 1_000,
    retries: 0,
  });
  const manager = (client as unknown as { connectionManager?: ZkConnectionManager }).connectionManager;
  const pending = new Set<(error: Error) => void>();
  let retryTimer: NodeJS.Timeout | undefined;
  let attempts = 0;
  let closed = false;
  /** The server of the attempt in progress, and its socket error if it had one. */
  let attempt: { server: string; error: string | undefined; connected: boolean } | undefined;

  // Between connection attempts wait with our backoff instead of the library's fixed spin delay.
  if (manager && typeof manager.findNextServer === 'function' && Array.isArray(manager.servers)) {
    const servers = manager.servers;
    manager.findNextServer = (callback) => {
      if (attempt !== undefined && !attempt.connected && !closed) {
        onAttemptFailed(attempt.error ?? `no answer from ${attempt.server}`);
      }
      const delay = attempts === 0 ? 0 : backoff.next();
      attempts++;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        if (closed) return;
        const index = (manager.nextServerIndex ?? 0) % servers.length;
        manager.nextServerIndex = index + 1;
        const server = servers[index] as { host?: string; port?: number } | undefined;
        const current: { server: string; error: string | undefined; connected: boolean } = {
          server: `${server?.host}:${server?.port}`,
          error: undefined,
          connected: false,
        };
        attempt = current;
        callback(server);
        manager.socket?.once('error', (error: Error) => {
          current.error = error.message;
        });
        manager.socket?.once('connect', () => {
          current.connected = true;
        });
      }, delay);
    };
  }

  client.on('state', onState);
  client.connect();

  const run = <T>(operation: (callback: Callback<T>) => void): Promise<[T, ZkStat | undefined]> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new Error('ZooKeeper session closed'));
        return;
      }
      pending.add(reject);
      operation((error, result, stat) => {
        pending.delete(reject);
        if (error) reject(error);
        else resolve([result as T, stat]);
      });
    });

  return {
    client,
    owns(stat) {
      return Buffer.isBuffer(stat.ephemeralOwner) && stat.ephemeralOwner.equals(client.getSessionId());
    },
    run: async (operation) => (await run(operation))[0],
    runWithStat: run,
    connected() {
      attempts = 0;
      backoff.reset();
    },
    async close(timeoutMs) {
      if (closed) return;
      closed = true;
      clearTimeout(retryTimer);
      const error = new Error('ZooKeeper session closed');
      for (const reject of pending) reject(error);
      pending.clear();
      client.removeAllListeners();
      if (!manager) {
        client.close();
        return;
      }
      if (manager.state === MANAGER_CONNECTED) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          manager.on?.('state', (state) => {
            if (state !== MANAGER_CLOSED) return;
            clearTimeout(timer);
            resolve();
          });
          client.close();
        });
      } else if (manager.state !== MANAGER_CLOSED) {
        // Not connected: no close packet can be sent. CLOSING makes the socket's close handler stop
        // instead of reconnecting.
        manager.state = MANAGER_CLOSING;
      }
      clearTimeout(manager.connectTimeoutHandler);
      manager.socket?.destroy();
    },
  };
}

/** The error code of a ZooKeeper exception, if it is one. */
export function zkErrorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
