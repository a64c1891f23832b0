/**
 * ZooKeeper registry (`zookeeper://h1:2181,h2:2181`, alias `zk://`), via the optional package
 * `node-zookeeper-client`, loaded on first use.
 *
 * - Parent nodes (`/callisto/<seg>/providers`) are persistent, created with mkdirp; provider and
 *   consumer nodes are EPHEMERAL, so they vanish when this instance's session ends (session timeout =
 *   ttlMs, within the server's min/max session timeout).
 * - A subscription reads the children with a child watcher and each child's data with a data watcher
 *   (one watcher function, which the client keeps once per path). Watches are one-shot: each read re-arms
 *   its own. A children event lists the children again and reads only the new ones; a data event reads
 *   that one child again; every child is read again only at the first read and after a reconnection.
 *   (Re-reading every child at every change made each update cost O(providers) per consumer: with 1,000
 *   registrations and 50 consumers, 20 ms of consumer CPU and ~110 ms of server CPU per update.)
 * - Disconnection keeps the session (the library reconnects, here with our bounded backoff) and the last
 *   lists; on reconnect every list is re-read. Session expiry opens a new session, re-creates every
 *   ephemeral node and re-reads every subscription.
 * - The override record (`<root>/<seg>/config`, runtime control) is a PERSISTENT node with the JSON as
 *   data, changed with compare-and-set on its version (zookeeper-config.ts).
 */

import { loadOptionalPackage } from './load-optional.js';
import type { StoredEntry } from './record-reader.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { operationTimeoutMs, resolveRegistryOptions } from './registry-options.js';
import { configPath, consumersPath, providersPath } from './registry-paths.js';
import {
  createRegistryShell,
  type EntryCounts,
  type RegistryContext,
  type RegistryDriver,
} from './registry-shell.js';
import { createBackoff, createGate, describeError } from './timing.js';
import { readZkConfig, writeZkConfig } from './zookeeper-config.js';
import {
  openZkSession,
  type ZkEvent,
  type ZkModule,
  type ZkSession,
  type ZkState,
  zkErrorCode,
} from './zookeeper-session.js';

export async function createZooKeeperRegistry(
  address: RegistryAddress,
  options?: Partial<RegistryOptions>,
): Promise<Registry> {
  const resolved = resolveRegistryOptions(address, options);
  const zk = await loadOptionalPackage<ZkModule>('node-zookeeper-client', address);
  return createRegistryShell('zookeeper', address, resolved, (context) => createZooKeeperDriver(zk, context));
}

interface Follow {
  /** One watcher for the directory and every child (the client keeps it once per path). */
  readonly watcher: (event: ZkEvent) => void;
  running: boolean;
  dirty: boolean;
  /** Read every child again: at the first read and after each (re)connection. */
  full: boolean;
  /** The children changed: list them again and read the new ones. */
  childrenChanged: boolean;
  /** Children whose data changed (or that were deleted): read again one by one. */
  readonly changed: Set<string>;
  /** What was read, by child name. */
  readonly entries: Map<string, StoredEntry>;
  /** Whether a list was delivered yet (the first one is, even empty or unchanged). */
  delivered: boolean;
}

/** ZooKeeper's codes for a connection or session that went away (CONNECTION_LOSS, OPERATION_TIMEOUT, SESSION_EXPIRED). */
const CONNECTION_ERRORS = new Set([-4, -7, -112]);

function isConnectionError(error: unknown): boolean {
  const code = zkErrorCode(error);
  return code !== undefined && CONNECTION_ERRORS.has(code);
}

/** Service segments a listing (`services()`) reads at most (two getChildren each). */
export const LISTING_MAX_SEGMENTS = 5_000;

function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/')) || '/';
}

function createZooKeeperDriver(zk: ZkModule, context: RegistryContext): RegistryDriver {
  const { options, address } = context;
  const timeoutMs = operationTimeoutMs(options);
  const chroot = address.params['chroot'] ?? '';
  const connectionString = `${address.hosts.join(',')}${chroot}`;
  const backoff = createBackoff(options.maxBackoffMs);
  const sessionBackoff = createBackoff(options.maxBackoffMs);
  const connected = createGate();
  const follows = new Map<string, Follow>();
  const pendingRemovals = new Set<string>();
  let session: ZkSession | undefined;
  let state: 'connecting' | 'connected' | 'closed' = 'connecting';
  let reopenTimer: NodeJS.Timeout | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  const { NO_NODE, NODE_EXISTS } = zk.Exception;
  /** Registrations that could not be restored at the last connection (reported once each). */
  const unrestorable = new Set<string>();
  /** Read through a function so TypeScript does not narrow it across awaits. */
  const isClosed = (): boolean => state === 'closed';

  /** Creates (or replaces) an ephemeral node owned by this session. */
  const ensureNode = async (s: ZkSession, path: string, value: string): Promise<void> => {
    const data = Buffer.from(value);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await s.run<string>((cb) => s.client.create(path, data, zk.CreateMode.EPHEMERAL, cb));
        return;
      } catch (error) {
        const code = zkErrorCode(error);
        if (code === NO_NODE) {
          await s.run<string>((cb) => s.client.mkdirp(parentOf(path), cb));
          continue;
        }
        if (code !== NODE_EXISTS) throw error;
      }
      try {
        const [current, stat] = await s.runWithStat<Buffer>((cb) => s.client.getData(path, undefined, cb));
        if (stat && s.owns(stat)) {
          if (!current?.equals(data)) await s.run((cb) => s.client.setData(path, data, -1, cb));
          return;
        }
        // left over from a session that has not expired yet (a previous process on the same address)
        await s.run<void>((cb) => s.client.remove(path, -1, cb));
      } catch (error) {
        if (zkErrorCode(error) !== NO_NODE) throw error;
      }
    }
    throw new Error(`cannot create ${path}: it keeps being recreated by another session`);
  };

  const removeNode = async (s: ZkSession, path: string): Promise<void> => {
    try {
      await s.run<void>((cb) => s.client.remove(path, -1, cb));
    } catch (error) {
      if (zkErrorCode(error) !== NO_NODE) throw error;
    }
  };

  /** Reads one child into `follow.entries` (dropped when gone); whether the list changed. */
  const readChild = async (s: ZkSession, dir: string, child: string, follow: Follow): Promise<boolean> => {
    const key = `${dir}/${child}`;
    const before = follow.entries.get(child);
    try {
      const data = await s.run<Buffer | null>((cb) => s.client.getData(key, follow.watcher, cb));
      const entry: StoredEntry = { key, value: data ?? '' };
      follow.entries.set(child, entry);
      return before === undefined || !Buffer.from(before.value ?? '').equals(Buffer.from(entry.value ?? ''));
    } catch (error) {
      if (zkErrorCode(error) !== NO_NODE) throw error;
      return follow.entries.delete(child); // removed meanwhile
    }
  };

  const listChildren = async (s: ZkSession, dir: string, follow: Follow): Promise<string[]> => {
    try {
      return await s.run<string[]>((cb) => s.client.getChildren(dir, follow.watcher, cb));
    } catch (error) {
      if (zkErrorCode(error) !== NO_NODE) throw error;
      await s.run<string>((cb) => s.client.mkdirp(dir, cb));
      return await s.run<string[]>((cb) => s.client.getChildren(dir, follow.watcher, cb));
    }
  };

  /**
   * Brings `follow.entries` up to date at the least cost: every child at a full read; else the children
   * list when it changed (reading only the new children) and the children whose data changed. Returns
   * whether the list changed. Each read re-arms that path's one-shot watch.
   */
  const update = async (s: ZkSession, segment: string, follow: Follow): Promise<boolean> => {
    const dir = providersPath(options.root, segment);
    let changed = false;
    let toRead: string[];
    if (follow.full || follow.childrenChanged) {
      const full = follow.full;
      follow.full = false;
      follow.childrenChanged = false;
      const children = await listChildren(s, dir, follow);
      const present = new Set(children);
      for (const child of [...follow.entries.keys()]) {
        if (!present.has(child)) changed = follow.entries.delete(child) || changed;
      }
      toRead = full ? children : children.filter((child) => !follow.entries.has(child));
      if (full) follow.changed.clear();
    } else {
      toRead = [];
    }
    for (const child of follow.changed) if (!toRead.includes(child)) toRead.push(child);
    follow.changed.clear();
    const results = await Promise.all(toRead.map((child) => readChild(s, dir, child, follow)));
    return changed || results.some(Boolean);
  };

  const refresh = async (segment: string, follow: Follow): Promise<void> => {
    if (follow.running) {
      follow.dirty = true;
      return;
    }
    follow.running = true;
    try {
      do {
        follow.dirty = false;
        const s = session;
        if (!s || isClosed()) return;
        const changed = await update(s, segment, follow);
        if (s !== session || follows.get(segment) !== follow) return;
        // the first list always (it may be empty), later ones only when something changed
        if (changed || !follow.delivered) context.deliver(segment, follow.entries.values());
        follow.delivered = true;
      } while (follow.dirty && !isClosed());
    } catch (error) {
      // read everything again next time; connection lost or session gone: the reconnect handler reads
      follow.full = true;
      if (state === 'connected') context.log('warn', `reading ${segment} failed: ${describeError(error)}`);
    } finally {
      follow.running = false;
    }
  };

  const onConnected = async (s: ZkSession): Promise<void> => {
    s.connected();
    for (const [path, value] of [...context.registered]) {
      try {
        await ensureNode(s, path, value);
        unrestorable.delete(path);
      } catch (error) {
        if (s !== session || isClosed() || isConnectionError(error)) return; // the next connection retries
        // This entry alone (another live session holds the same path, say): it must not keep the
        // registry from connecting and following its lists. Reported once; tried again at reconnects.
        if (!unrestorable.has(path)) {
          unrestorable.add(path);
          context.log('warn', `cannot restore ${path}: ${describeError(error)}`);
        }
      }
    }
    if (s !== session || isClosed()) return;
    sessionBackoff.reset();
    state = 'connected';
    context.setStatus('connected');
    connected.open();
    for (const [segment, follow] of follows) {
      follow.full = true; // whatever happened while disconnected
      void refresh(segment, follow);
    }
    // what was unregistered while disconnected: our session would keep those ephemeral nodes
    for (const path of [...pendingRemovals]) {
      if (context.registered.has(path)) {
        pendingRemovals.delete(path);
        continue;
      }
      try {
        await removeNode(s, path);
        pendingRemovals.delete(path);
      } catch {
        return; // lost again; the next connection retries
      }
    }
  };

  /** Drops a dead session and opens a new one (its nodes are re-created in onConnected). */
  const replace = (s: ZkSession, why: string): void => {
    clearTimeout(expiryTimer);
    if (s !== session || isClosed()) return;
    state = 'connecting';
    context.setStatus('disconnected', why);
    context.log('warn', `${why}; opening a new session and registering again`);
    session = undefined;
    void s.close(timeoutMs);
    reopenTimer = setTimeout(open, sessionBackoff.next());
  };

  const open = (): void => {
    reopenTimer = undefined;
    if (state === 'closed') return;
    let everConnected = false;
    const s = openZkSession(zk, {
      connectionString,
      sessionTimeoutMs: options.ttlMs,
      backoff,
      onState: (zkState: ZkState) => {
        if (s !== session || state === 'closed') return;
        if (zkState === zk.State.SYNC_CONNECTED) {
          everConnected = true;
          clearTimeout(expiryTimer);
          void onConnected(s);
        } else if (zkState === zk.State.DISCONNECTED) {
          state = 'connecting';
          context.setStatus('disconnected', 'connection lost');
          // Past the session timeout the session is gone on the server; a server that lost its data
          // would even refuse our reconnects (we have seen a newer zxid), so start a new session.
          clearTimeout(expiryTimer);
          if (everConnected) {
            expiryTimer = setTimeout(
              () => replace(s, 'no connection for longer than the session timeout'),
              options.ttlMs,
            );
          }
        } else if (zkState === zk.State.EXPIRED) {
          replace(s, 'session expired');
        } else if (zkState === zk.State.AUTH_FAILED) {
          replace(s, 'authentication failed');
        }
      },
      onAttemptFailed: (reason) => {
        if (s === session && state === 'connecting') context.setStatus('disconnected', reason);
      },
    });
    session = s;
  };

  /** The current session once connected (for the listings). */
  const connectedSession = async (): Promise<ZkSession> => {
    if (state !== 'connected') await connected.wait();
    const s = session;
    if (!s) throw new Error('not connected');
    return s;
  };

  /** The children of a node; none when it does not exist. */
  const childrenOf = async (s: ZkSession, path: string): Promise<string[]> => {
    try {
      return await s.run<string[]>((cb) => s.client.getChildren(path, undefined, cb));
    } catch (error) {
      if (zkErrorCode(error) === NO_NODE) return [];
      throw error;
    }
  };

  open();

  return {
    async put(path, value) {
      pendingRemovals.delete(path);
      // retried after every reconnect until written, unless replaced or unregistered meanwhile
      while (context.registered.get(path) === value) {
        const s = session;
        if (state === 'connected' && s) {
          try {
            await ensureNode(s, path, value);
            return;
          } catch (error) {
            if (state === 'connected' && s === session) throw error;
          }
        }
        await connected.wait();
      }
    },
    async remove(path) {
      const s = session;
      if (state === 'connected' && s) {
        try {
          await removeNode(s, path);
          return;
        } catch {
          // fall through: removed after reconnecting
        }
      }
      if (!context.registered.has(path)) pendingRemovals.add(path);
    },
    watch(segment) {
      if (state === 'closed' || follows.has(segment)) return;
      const dir = providersPath(options.root, segment);
      const follow: Follow = {
        watcher: (event) => {
          if (follows.get(segment) !== follow) return;
          if (event.path === dir) follow.childrenChanged = true;
          else if (event.path.startsWith(`${dir}/`)) follow.changed.add(event.path.slice(dir.length + 1));
          else follow.full = true;
          void refresh(segment, follow);
        },
        running: false,
        dirty: false,
        full: true,
        childrenChanged: false,
        changed: new Set(),
        entries: new Map(),
        delivered: false,
      };
      follows.set(segment, follow);
      if (state === 'connected') void refresh(segment, follow);
    },
    async inventory(match) {
      if (state !== 'connected') await connected.wait();
      const s = session;
      if (!s) throw new Error('not connected');
      const counts = new Map<string, number>();
      let segments: string[];
      try {
        segments = await s.run<string[]>((cb) => s.client.getChildren(options.root, undefined, cb));
      } catch (error) {
        if (zkErrorCode(error) === NO_NODE) return counts;
        throw error;
      }
      for (const segment of segments) {
        if (!match(segment)) continue;
        const dir = providersPath(options.root, segment);
        const children = await s
          .run<string[]>((cb) => s.client.getChildren(dir, undefined, cb))
          .catch((error: unknown) => {
            if (zkErrorCode(error) === NO_NODE) return [];
            throw error;
          });
        counts.set(segment, children.length);
      }
      return counts;
    },
    async catalog() {
      const s = await connectedSession();
      const counts = new Map<string, EntryCounts>();
      const segments = await childrenOf(s, options.root);
      for (const segment of segments.slice(0, LISTING_MAX_SEGMENTS)) {
        const providers = await childrenOf(s, providersPath(options.root, segment));
        const consumers = await childrenOf(s, consumersPath(options.root, segment));
        counts.set(segment, { providers: providers.length, consumers: consumers.length });
      }
      return counts;
    },
    async consumerEntries(segment) {
      const s = await connectedSession();
      const dir = consumersPath(options.root, segment);
      const entries: StoredEntry[] = [];
      for (const child of await childrenOf(s, dir)) {
        const key = `${dir}/${child}`;
        try {
          const data = await s.run<Buffer | null>((cb) => s.client.getData(key, undefined, cb));
          entries.push({ key, value: data ?? '' });
        } catch (error) {
          if (zkErrorCode(error) !== NO_NODE) throw error; // else removed between the two reads
        }
      }
      return entries;
    },
    async readConfig(segment) {
      return readZkConfig(zk, await connectedSession(), configPath(options.root, segment));
    },
    async writeConfig(segment, value, version) {
      const path = configPath(options.root, segment);
      return writeZkConfig(zk, await connectedSession(), path, value, version);
    },
    unwatch(segment) {
      follows.delete(segment);
    },
    async close() {
      state = 'closed';
      clearTimeout(reopenTimer);
      clearTimeout(expiryTimer);
      follows.clear();
      connected.fail(new Error(`registry ${address.raw} closed`));
      const s = session;
      session = undefined;
      await s?.close(timeoutMs);
    },
  };
}
