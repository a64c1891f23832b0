/**
 * etcd registry (`etcd://h1:2379,h2:2379`), via the optional package `etcd3`, loaded on first use. With
 * several members, a member that fails is skipped while others answer (etcd-client.ts), a lease
 * keepalive that fails on one member is sent again to another, and a failure is reported as a
 * disconnection only when the next attempt (on the other members) fails too: losing a member costs a
 * watch re-established, not a registry that flaps.
 *
 * - One lease per registry instance (TTL = ttlMs rounded up to seconds), kept alive every TTL/3 by this
 *   driver; every key this instance writes is attached to it, so a dead process's keys vanish when the
 *   lease expires (etcd checks expiry every 500 ms).
 * - When etcd says the lease is gone (restart with data loss, long partition), a new lease is granted
 *   and every key is written again.
 * - The override record (`<root>/<seg>/config`, runtime control) is a plain key without a lease, changed
 *   with a transaction comparing its mod revision (compare-and-set).
 * - Subscriptions read `/callisto/<seg>/providers/` with one range request and then watch the prefix
 *   from the next revision. On any connection failure the watchers are dropped, the last lists kept, and
 *   a recovery loop (bounded exponential backoff) re-grants or keeps the lease, re-puts the keys and
 *   re-reads every subscribed list before reporting `connected` again.
 */
import type * as Etcd3Module from 'etcd3';
import { createEtcdClient, type Etcd3 } from './etcd-client.js';
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
import { createBackoff, createGate, describeError, withTimeout } from './timing.js';

/** Keys an inventory (NoProvider diagnostics) reads at most. */
export const INVENTORY_MAX_KEYS = 10_000;

export async function createEtcdRegistry(
  address: RegistryAddress,
  options?: Partial<RegistryOptions>,
): Promise<Registry> {
  const resolved = resolveRegistryOptions(address, options);
  const etcd = await loadOptionalPackage<Etcd3>('etcd3', address);
  return createRegistryShell('etcd', address, resolved, (context) => createEtcdDriver(etcd, context));
}

interface Follow {
  watcher: Etcd3Module.Watcher | undefined;
  /** Ends the wait for the watcher to connect when it is dropped first (an unsubscribe right away). */
  dropped?: () => void;
  /** The stored entries by key, checked by the shell on every delivery. */
  entries: Map<string, StoredEntry>;
}

function createEtcdDriver(etcd: Etcd3, context: RegistryContext): RegistryDriver {
  const { options, address } = context;
  const ttlSeconds = Math.max(1, Math.ceil(options.ttlMs / 1000));
  const keepaliveMs = Math.max(100, Math.floor((ttlSeconds * 1000) / 3));
  const timeoutMs = operationTimeoutMs(options);
  const client = createEtcdClient(etcd, address, options);
  const backoff = createBackoff(options.maxBackoffMs);
  const connected = createGate();
  const follows = new Map<string, Follow>();
  const pendingRemovals = new Set<string>();
  let lease: Etcd3Module.Lease | undefined;
  let state: 'recovering' | 'connected' | 'closed' = 'recovering';
  let failedWhileRecovering = false;
  /** The lease was kept or granted (and keys written) in the recovery under way: close() revokes it. */
  let leaseLiveWhileRecovering = false;
  let timer: NodeJS.Timeout | undefined;
  /** Read through a function so TypeScript does not narrow it across awaits. */
  const isClosed = (): boolean => state === 'closed';

  const schedule = (delayMs: number, task: () => Promise<void>): void => {
    clearTimeout(timer);
    timer = setTimeout(() => void task(), delayMs);
  };

  const leaseId = async (): Promise<string> => {
    if (!lease) {
      lease = client.lease(ttlSeconds, { autoKeepAlive: false });
      lease.on('lost', () => {});
    }
    const current = lease;
    try {
      return await withTimeout(current.grant(), timeoutMs, 'etcd lease grant');
    } catch (error) {
      if (lease === current) lease = undefined;
      current.release();
      throw error;
    }
  };

  const putAll = async (): Promise<void> => {
    const id = await leaseId();
    for (const [path, value] of [...context.registered]) {
      await client.put(path).value(value).lease(id).exec();
    }
  };

  /**
   * Runs `operation`, again on another member (once per member) when a member fails it: etcd3 opens a
   * keepalive stream on a random member, which may be one that is down while the others serve.
   */
  const onAnyMember = async <T>(operation: () => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await operation();
      } catch (error) {
        const recoverable = error instanceof Error && etcd.isRecoverableError(error);
        if (!recoverable || attempt >= address.hosts.length || isClosed()) throw error;
      }
    }
  };

  /** Keeps the lease alive; when etcd no longer knows it, grants a new one and writes everything again. */
  const keepalive = async (): Promise<void> => {
    if (!lease) return putAll();
    const current = lease;
    try {
      await onAnyMember(() => withTimeout(current.keepaliveOnce(), timeoutMs, 'etcd lease keepalive'));
    } catch (error) {
      if (!(error instanceof etcd.EtcdLeaseInvalidError)) throw error;
      await replaceLease(current);
    }
  };

  /** etcd no longer knows `current` (expired, or the server lost its data): grant a new one, write all. */
  const replaceLease = async (current: Etcd3Module.Lease): Promise<void> => {
    context.log('warn', 'the lease expired on the server; granting a new one and registering again');
    if (lease === current) lease = undefined;
    current.release();
    await putAll();
  };

  /** Writes one entry under the lease. */
  const write = async (path: string, value: string): Promise<void> => {
    const id = await leaseId();
    const current = lease;
    try {
      await client.put(path).value(value).lease(id).exec();
    } catch (error) {
      if (!(error instanceof etcd.EtcdLeaseInvalidError) || !current) throw error;
      await replaceLease(current);
    }
  };

  const stopWatchers = (): void => {
    for (const follow of follows.values()) {
      const watcher = follow.watcher;
      follow.watcher = undefined;
      follow.dropped?.();
      if (!watcher) continue;
      watcher.removeAllListeners();
      watcher.on('error', () => {});
      void watcher.cancel().catch(() => {});
    }
  };

  const fail = (error: unknown): void => {
    if (state === 'closed') return;
    if (state === 'recovering') {
      failedWhileRecovering = true;
      leaseLiveWhileRecovering = false;
      return;
    }
    state = 'recovering';
    stopWatchers();
    // Reported by the recovery if its first attempt (~100 ms later) fails too: one member lost while
    // the others serve is repaired by that attempt, and is no disconnection from the cluster.
    context.log('info', `${describeError(error)}; reconnecting`);
    schedule(backoff.next(), recover);
  };

  const follow = async (segment: string, entry: Follow): Promise<void> => {
    const prefix = `${providersPath(options.root, segment)}/`;
    const response = await client.getAll().prefix(prefix).exec();
    if (state === 'closed' || follows.get(segment) !== entry) return;
    entry.entries = new Map();
    for (const kv of response.kvs) {
      const key = kv.key.toString();
      entry.entries.set(key, { key, value: kv.value });
    }
    context.deliver(segment, entry.entries.values());
    const revision = (BigInt(response.header.revision) + 1n).toString();
    const watcher = client.watch().prefix(prefix).startRevision(revision).watcher();
    entry.watcher = watcher;
    watcher.on('put', (kv) => {
      const key = kv.key.toString();
      entry.entries.set(key, { key, value: kv.value });
      context.deliver(segment, entry.entries.values());
    });
    watcher.on('delete', (kv) => {
      entry.entries.delete(kv.key.toString());
      context.deliver(segment, entry.entries.values());
    });
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        entry.dropped = resolve;
        watcher.once('connected', () => resolve());
        watcher.once('disconnected', reject);
        watcher.once('error', reject);
      }),
      timeoutMs,
      'etcd watch',
    );
    entry.dropped = undefined;
    // unwatched (or all watchers stopped) while it connected: nothing more to follow
    if (entry.watcher !== watcher) return;
    watcher.on('disconnected', fail);
    watcher.on('error', fail);
  };

  /** Deletes what was unregistered while disconnected (the shared lease would keep it alive). */
  const flushRemovals = async (): Promise<void> => {
    for (const path of [...pendingRemovals]) {
      if (state !== 'connected') return;
      try {
        if (!context.registered.has(path)) await client.delete().key(path).exec();
        pendingRemovals.delete(path);
      } catch (error) {
        fail(error);
      }
    }
  };

  const unwatched = (): Array<[string, Follow]> => [...follows].filter(([, entry]) => !entry.watcher);

  /** Brings everything back after a failure (or at start): lease, keys, removals, lists, watchers. */
  const recover = async (): Promise<void> => {
    if (state === 'closed') return;
    failedWhileRecovering = false;
    leaseLiveWhileRecovering = false;
    try {
      if (context.registered.size > 0 || lease) {
        await keepalive();
        leaseLiveWhileRecovering = !failedWhileRecovering;
      } else if (follows.size === 0) await client.get(`${options.root}/`).exec(); // a probe
      // last, until every subscription has a watcher (watch() may add one while anything above awaits);
      // together, not one after the other: a consumer following 20 services waited 20 round trips
      for (let batch = unwatched(); batch.length > 0 && !isClosed(); batch = unwatched()) {
        const results = await Promise.allSettled(batch.map(([segment, entry]) => follow(segment, entry)));
        const failure = results.find((result) => result.status === 'rejected');
        if (failure) throw (failure as PromiseRejectedResult).reason;
      }
      if (failedWhileRecovering) throw new Error('connection lost while recovering');
      if (isClosed()) return;
      state = 'connected';
      backoff.reset();
      context.setStatus('connected');
      connected.open();
      schedule(keepaliveMs, tick);
      void flushRemovals();
    } catch (error) {
      leaseLiveWhileRecovering = false;
      if (isClosed()) return;
      stopWatchers();
      context.setStatus('disconnected', describeError(error));
      schedule(backoff.next(), recover);
    }
  };

  const tick = async (): Promise<void> => {
    if (state !== 'connected') return;
    try {
      if (context.registered.size > 0 || lease) await keepalive();
      if (state === 'connected') schedule(keepaliveMs, tick);
    } catch (error) {
      fail(error);
    }
  };

  schedule(0, recover);

  return {
    async put(path, value) {
      pendingRemovals.delete(path);
      // retried after every reconnect until written, unless replaced or unregistered meanwhile
      while (context.registered.get(path) === value) {
        if (state === 'connected') {
          try {
            await write(path, value);
            return;
          } catch (error) {
            if (!(error instanceof Error) || !etcd.isRecoverableError(error)) throw error;
            fail(error);
          }
        }
        await connected.wait();
      }
    },
    async remove(path) {
      if (state === 'connected') {
        try {
          await client.delete().key(path).exec();
          return;
        } catch (error) {
          fail(error);
        }
      }
      if (!context.registered.has(path)) pendingRemovals.add(path);
    },
    watch(segment) {
      if (state === 'closed' || follows.has(segment)) return;
      const entry: Follow = { watcher: undefined, entries: new Map() };
      follows.set(segment, entry);
      if (state === 'connected') follow(segment, entry).catch(fail);
    },
    async inventory(match) {
      const top = `${options.root}/`;
      const keys = await client.getAll().prefix(top).limit(INVENTORY_MAX_KEYS).keys();
      const counts = new Map<string, number>();
      for (const key of keys) {
        const [segment, kind, address] = key.slice(top.length).split('/');
        if (segment === undefined || !match(segment)) continue;
        const count = counts.get(segment) ?? 0;
        counts.set(segment, kind === 'providers' && address ? count + 1 : count);
      }
      return counts;
    },
    async catalog() {
      const top = `${options.root}/`;
      const keys = await client.getAll().prefix(top).limit(INVENTORY_MAX_KEYS).keys();
      const counts = new Map<string, EntryCounts>();
      for (const key of keys) {
        const [segment, kind, name] = key.slice(top.length).split('/');
        if (!segment) continue;
        const count = counts.get(segment) ?? { providers: 0, consumers: 0 };
        if (name && kind === 'providers') count.providers++;
        if (name && kind === 'consumers') count.consumers++;
        counts.set(segment, count);
      }
      return counts;
    },
    async consumerEntries(segment) {
      const prefix = `${consumersPath(options.root, segment)}/`;
      const response = await client.getAll().prefix(prefix).limit(INVENTORY_MAX_KEYS).exec();
      return response.kvs.map((kv): StoredEntry => ({ key: kv.key.toString(), value: kv.value }));
    },
    async readConfig(segment) {
      const kv = (await client.get(configPath(options.root, segment)).exec()).kvs[0];
      // an absent key compares as mod revision 0
      return { value: kv?.value, version: kv ? String(kv.mod_revision) : '0' };
    },
    async writeConfig(segment, value, version) {
      const path = configPath(options.root, segment);
      // one transaction: written only if the key was not modified since it was read; no lease: the
      // override record outlives every process
      const response = await client
        .if(path, 'Mod', '==', version)
        .then(value !== undefined ? client.put(path).value(value) : client.delete().key(path))
        .commit();
      return response.succeeded;
    },
    unwatch(segment) {
      const entry = follows.get(segment);
      if (!entry) return;
      follows.delete(segment);
      const watcher = entry.watcher;
      entry.watcher = undefined;
      entry.dropped?.();
      if (watcher) {
        watcher.removeAllListeners();
        watcher.on('error', () => {});
        void watcher.cancel().catch(() => {});
      }
    },
    async close() {
      // closed while recovering after the keys were written (a short-lived process): revoke all the same
      const wasConnected = state === 'connected' || leaseLiveWhileRecovering;
      state = 'closed';
      clearTimeout(timer);
      stopWatchers();
      follows.clear();
      connected.fail(new Error(`registry ${address.raw} closed`));
      const current = lease;
      lease = undefined;
      if (current) {
        if (wasConnected) await withTimeout(current.revoke(), timeoutMs, 'etcd lease revoke').catch(() => {});
        current.release();
      }
      client.close();
    },
  };
}
