/**
 * Redis registry (`redis://host:6379?db=0&password=...`), via the optional package `ioredis`, loaded on
 * first use; or a primary with replicas watched by Sentinel
 * (`redis-sentinel://s1:26379,s2:26379,s3:26379/mymaster?db=0&password=...&sentinelPassword=...`):
 * both connections ask the sentinels for the current primary and check its role when they connect; a
 * primary that dies closes them (they ask again, every second at most, until a replica is promoted), a
 * demoted one answers writes with READONLY (they reconnect and resend); on `ready` everything registered
 * is written again (what the old primary had not yet replicated is not lost for long).
 * Layout, all readable with redis-cli:
 *
 *   /callisto/<seg>/providers/<host>:<port>   string key, the record JSON, PX ttl refreshed every ttl/3
 *   /callisto/<seg>/providers                 SET of `<host>:<port>` members (also a pub/sub channel)
 *   /callisto/<seg>/consumers/<host>:<pid>:<instance>    likewise for consumers
 *   /callisto/<seg>/config                    string key without expiry: the override record (runtime control),
 *                                             changed by a compare-and-set script (a digest of the value)
 *
 * Writes and reads are small Lua scripts, so "set the key and add the member" and "list members, drop
 * the ones whose key expired" are atomic. Register/unregister publish on the service's channel;
 * subscribers re-read on a message, every ttl/2 (a missed message), and right after the earliest key
 * expiry they saw (a SIGKILLed provider is gone within the TTL plus a few ms). A second connection is
 * used for subscribing. ioredis reconnects with our bounded backoff; on `ready` everything registered is
 * written again and every list re-read.
 */
import type * as IORedis from 'ioredis';
import { loadOptionalPackage } from './load-optional.js';
import { contentDigest } from './override-update.js';
import type { StoredEntry } from './record-reader.js';
import { MAX_RECORD_BYTES } from './record-validation.js';
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

type RedisClass = typeof IORedis.Redis;
type RedisClient = IORedis.Redis;

export async function createRedisRegistry(
  address: RegistryAddress,
  options?: Partial<RegistryOptions>,
): Promise<Registry> {
  const resolved = resolveRegistryOptions(address, options);
  const loaded = await loadOptionalPackage<RedisClass & { Redis?: RedisClass }>('ioredis', address);
  const Redis = loaded.Redis ?? loaded;
  return createRegistryShell(address.kind, address, resolved, (context) => createRedisDriver(Redis, context));
}

/** `host:port` (or `[v6]:port`) as ioredis wants it. */
function hostPort(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) };
}

/**
 * Where ioredis connects: the one server of `redis://`, or, for `redis-sentinel://`, the primary of the
 * named master group as the sentinels tell it (checked to be a primary on connect, followed through
 * failovers; a READONLY answer from a demoted primary reconnects and resends).
 */
function serverOptions(address: RegistryAddress, retry: () => number): IORedis.RedisOptions {
  const { db, password, username, master, sentinelPassword, sentinelUsername } = address.params;
  const common: IORedis.RedisOptions = {
    ...(db ? { db: Number(db) } : {}),
    ...(password ? { password } : {}),
    ...(username ? { username } : {}),
  };
  if (address.kind !== 'redis-sentinel')
    return { ...common, ...hostPort(address.hosts[0] ?? '127.0.0.1:6379') };
  return {
    ...common,
    sentinels: address.hosts.map(hostPort),
    name: master,
    role: 'master',
    ...(sentinelPassword ? { sentinelPassword } : {}),
    ...(sentinelUsername ? { sentinelUsername } : {}),
    // every sentinel unreachable: try them all again after our bounded backoff
    sentinelRetryStrategy: retry,
    // Off: ioredis 6's detector outlives the connection that started it and, at the next failover,
    // disconnects a client in the middle of its reconnect, which then ends for good. A dead primary is
    // noticed by its closed connection; a demoted one answers writes with READONLY (reconnect, resend).
    failoverDetector: false,
    reconnectOnError: (error: Error) => (error.message.startsWith('READONLY') ? 2 : false),
  };
}

/** In Sentinel mode, the longest wait between attempts to reach the (new) primary, ms. */
export const SENTINEL_MAX_RECONNECT_MS = 1_000;

/** KEYS: entry, set. ARGV: value, ttl ms, member, channel. Publishes when the value changed. */
const PUT_SCRIPT = `
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 3)
if previous ~= ARGV[1] then redis.call('PUBLISH', ARGV[4], ARGV[3]) end
return 1`;

/** KEYS: entry, set. ARGV: member, channel. */
const REMOVE_SCRIPT = `
local removed = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
if removed > 0 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return removed`;

/**
 * KEYS: set. ARGV: key prefix. Returns member, status, text, pttl quadruples: status `ok` with the value,
 * or `bad` with why the key cannot be read as a string (one such key must not fail the whole list).
 * Drops members whose key is gone.
 */
const READ_SCRIPT = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local out = {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local key = ARGV[1] .. member
  local value = redis.pcall('GET', key)
  if type(value) == 'table' and value.err then
    out[#out + 1] = member
    out[#out + 1] = 'bad'
    out[#out + 1] = value.err
    out[#out + 1] = redis.call('PTTL', key)
  elseif value then
    out[#out + 1] = member
    out[#out + 1] = 'ok'
    out[#out + 1] = value
    out[#out + 1] = redis.call('PTTL', key)
  else
    redis.call('SREM', KEYS[1], member)
  end
end
return out`;

/** KEYS: set. ARGV: key prefix. How many members still have their key (expired ones do not count). */
const COUNT_SCRIPT = `
local live = 0
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. member) == 1 then live = live + 1 end
end
return live`;

/**
 * KEYS: the override record. ARGV: the SHA-1 of the record as read (its first MAX_RECORD_BYTES + 1
 * bytes, as readConfig reads it; absent: of nothing), the last byte offset read, `set` or `del`, the new
 * value. Writes only while the record is unchanged; 1 when written, 0 on a conflict.
 */
const CONFIG_CAS_SCRIPT = `
local current = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[2]))
if redis.sha1hex(current) ~= ARGV[1] then return 0 end
if ARGV[3] == 'set' then redis.call('SET', KEYS[1], ARGV[4]) else redis.call('DEL', KEYS[1]) end
return 1`;

/** The entries of a READ_SCRIPT reply for the set `set`. */
function storedEntries(set: string, reply: Array<string | number>): StoredEntry[] {
  const entries: StoredEntry[] = [];
  for (let i = 0; i + 3 < reply.length; i += 4) {
    const key = `${set}/${String(reply[i])}`;
    const text = String(reply[i + 2]);
    entries.push(reply[i + 1] === 'ok' ? { key, value: text } : { key, problem: `cannot read: ${text}` });
  }
  return entries;
}

/** Keys an inventory (NoProvider diagnostics) scans at most. */
export const INVENTORY_MAX_KEYS = 10_000;

/** `text` as a SCAN pattern matching itself only. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

interface Follow {
  timer: NodeJS.Timeout | undefined;
  running: boolean;
  dirty: boolean;
}

/** `a/b/c` -> [`a/b`, `c`]: the members set (and channel) of an entry, and its member name. */
function splitPath(path: string): [string, string] {
  const at = path.lastIndexOf('/');
  return [path.slice(0, at), path.slice(at + 1)];
}

function createRedisDriver(Redis: RedisClass, context: RegistryContext): RegistryDriver {
  const { options, address } = context;
  const ttlMs = options.ttlMs;
  const heartbeatMs = Math.max(50, Math.floor(ttlMs / 3));
  const resyncMs = Math.max(100, Math.floor(ttlMs / 2));
  const timeoutMs = operationTimeoutMs(options);
  const connectionOptions = (retry: () => number): IORedis.RedisOptions => ({
    ...serverOptions(address, retry),
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: null,
    enableOfflineQueue: true,
    retryStrategy: retry,
  });
  // With sentinels, a failed attempt usually means the failover is not finished yet: ask again soon.
  const sentinel = address.kind === 'redis-sentinel';
  const maxBackoffMs = sentinel
    ? Math.min(options.maxBackoffMs, SENTINEL_MAX_RECONNECT_MS)
    : options.maxBackoffMs;
  const backoff = createBackoff(maxBackoffMs);
  const subBackoff = createBackoff(maxBackoffMs);
  const cmd: RedisClient = new Redis(connectionOptions(() => backoff.next()));
  // ioredis's own resubscribe after a reconnect leaves its promise unhandled (redis/ioredis#2187): a
  // connection that drops again before the reply would reject it with nobody listening, which ends a
  // Node process. The channels are subscribed again here instead, on 'ready', with the error kept.
  const sub: RedisClient = new Redis({
    ...connectionOptions(() => subBackoff.next()),
    autoResubscribe: false,
  });
  const follows = new Map<string, Follow>();
  const pendingRemovals = new Set<string>();
  const connected = createGate();
  let heartbeat: NodeJS.Timeout | undefined;
  let lastError = '';
  let closed = false;

  const putEntry = (path: string, value: string): Promise<unknown> => {
    const [set, member] = splitPath(path);
    return cmd.eval(PUT_SCRIPT, 2, path, set, value, String(ttlMs), member, set);
  };
  const removeEntry = (path: string): Promise<unknown> => {
    const [set, member] = splitPath(path);
    return cmd.eval(REMOVE_SCRIPT, 2, path, set, member, set);
  };

  const scheduleResync = (segment: string, follow: Follow, delayMs: number): void => {
    clearTimeout(follow.timer);
    if (closed || follows.get(segment) !== follow) return;
    follow.timer = setTimeout(() => void resync(segment, follow), delayMs);
  };

  const resync = async (segment: string, follow: Follow): Promise<void> => {
    if (follow.running) {
      follow.dirty = true;
      return;
    }
    if (cmd.status !== 'ready') return scheduleResync(segment, follow, resyncMs);
    follow.running = true;
    let next = resyncMs;
    try {
      do {
        follow.dirty = false;
        const set = providersPath(options.root, segment);
        const reply = (await withTimeout(
          cmd.eval(READ_SCRIPT, 1, set, `${set}/`),
          timeoutMs,
          'redis read',
        )) as Array<string | number>;
        if (closed || follows.get(segment) !== follow) return;
        const entries: StoredEntry[] = [];
        next = resyncMs;
        for (let i = 0; i + 3 < reply.length; i += 4) {
          const key = `${set}/${String(reply[i])}`;
          const text = String(reply[i + 2]);
          entries.push(
            reply[i + 1] === 'ok' ? { key, value: text } : { key, problem: `cannot read: ${text}` },
          );
          const pttl = Number(reply[i + 3]);
          if (pttl >= 0) next = Math.min(next, pttl + 20);
        }
        context.deliver(segment, entries);
      } while (follow.dirty && !closed);
    } catch (error) {
      lastError = describeError(error);
      next = Math.min(resyncMs, 500);
    } finally {
      follow.running = false;
    }
    scheduleResync(segment, follow, next);
  };

  const beat = async (): Promise<void> => {
    if (cmd.status !== 'ready') return;
    await Promise.all([...context.registered].map(([path, value]) => putEntry(path, value))).catch(
      (error) => {
        lastError = describeError(error);
      },
    );
  };

  const ensureHeartbeat = (): void => {
    if (heartbeat || closed) return;
    heartbeat = setInterval(() => void beat(), heartbeatMs);
  };

  const onReady = async (): Promise<void> => {
    backoff.reset();
    try {
      await Promise.all([...context.registered].map(([path, value]) => putEntry(path, value)));
    } catch (error) {
      lastError = describeError(error);
      return; // the connection dropped again; the next 'ready' retries
    }
    if (closed || cmd.status !== 'ready') return;
    for (const [segment, follow] of follows) void resync(segment, follow);
    context.setStatus('connected');
    connected.open();
    // what was unregistered while disconnected (expires anyway, but consumers should see it now)
    for (const path of [...pendingRemovals]) {
      if (context.registered.has(path)) {
        pendingRemovals.delete(path);
        continue;
      }
      try {
        await removeEntry(path);
        pendingRemovals.delete(path);
      } catch (error) {
        lastError = describeError(error);
        return;
      }
    }
  };

  for (const client of [cmd, sub]) {
    client.on('error', (error: Error) => {
      lastError = describeError(error);
    });
  }
  cmd.on('ready', () => void onReady());
  cmd.on('close', () => {
    if (!closed) context.setStatus('disconnected', lastError || 'connection closed');
  });
  /** Subscribes the providers channels of `segments`, keeping the error (the next 'ready' retries). */
  const subscribe = (segments: Iterable<string>): Promise<unknown> => {
    const channels = [...segments].map((segment) => providersPath(options.root, segment));
    if (channels.length === 0) return Promise.resolve();
    return sub.subscribe(...channels).catch((error: unknown) => {
      lastError = describeError(error);
    });
  };
  sub.on('ready', () => {
    subBackoff.reset();
    // subscribed again first; then every list re-read, as messages may have been missed meanwhile
    void subscribe(follows.keys()).then(() => {
      for (const [segment, follow] of follows) void resync(segment, follow);
    });
  });
  sub.on('message', (channel: string) => {
    const prefix = `${options.root}/`;
    if (!channel.startsWith(prefix) || !channel.endsWith('/providers')) return;
    const segment = channel.slice(prefix.length, -'/providers'.length);
    const follow = follows.get(segment);
    if (follow) void resync(segment, follow);
  });

  const shutdown = async (client: RedisClient): Promise<void> => {
    if (client.status === 'end') return;
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    if (client.status === 'ready') {
      await withTimeout(client.quit(), timeoutMs, 'redis quit').catch(() => client.disconnect());
    } else if (client.status === 'reconnecting') {
      // Between attempts there is no socket, only the retry timer that disconnect() clears; ioredis
      // emits no 'end' then, so there is nothing to wait for.
      client.disconnect();
      return;
    } else {
      client.disconnect();
    }
    await withTimeout(ended, timeoutMs, 'redis close').catch(() => {});
  };

  return {
    async put(path, value) {
      pendingRemovals.delete(path);
      ensureHeartbeat();
      // retried after every reconnect until written, unless replaced or unregistered meanwhile
      while (context.registered.get(path) === value) {
        if (cmd.status === 'ready') {
          try {
            await withTimeout(putEntry(path, value), timeoutMs, 'redis put');
            return;
          } catch (error) {
            lastError = describeError(error);
            if (cmd.status === 'ready') throw error;
          }
        }
        await connected.wait();
      }
    },
    async remove(path) {
      if (cmd.status === 'ready') {
        try {
          await withTimeout(removeEntry(path), timeoutMs, 'redis remove');
          return;
        } catch (error) {
          lastError = describeError(error);
        }
      }
      if (!context.registered.has(path)) pendingRemovals.add(path);
    },
    watch(segment) {
      if (closed || follows.has(segment)) return;
      const follow: Follow = { timer: undefined, running: false, dirty: false };
      follows.set(segment, follow);
      void subscribe([segment]);
      void resync(segment, follow);
    },
    async inventory(match) {
      const top = `${options.root}/`;
      const pattern = `${globEscape(top)}*/providers`;
      const counts = new Map<string, number>();
      let cursor = '0';
      let scanned = 0;
      do {
        const [nextCursor, keys] = await cmd.scan(cursor, 'MATCH', pattern, 'COUNT', 1_000, 'TYPE', 'set');
        cursor = nextCursor;
        scanned += 1_000;
        for (const key of keys) {
          const segment = key.slice(top.length, -'/providers'.length);
          if (!segment.includes('/') && match(segment)) counts.set(segment, await cmd.scard(key));
        }
      } while (cursor !== '0' && scanned < INVENTORY_MAX_KEYS);
      return counts;
    },
    async catalog() {
      const top = `${options.root}/`;
      const counts = new Map<string, EntryCounts>();
      let cursor = '0';
      let scanned = 0;
      do {
        const [nextCursor, keys] = await cmd.scan(
          cursor,
          'MATCH',
          `${globEscape(top)}*`,
          'COUNT',
          1_000,
          'TYPE',
          'set',
        );
        cursor = nextCursor;
        scanned += 1_000;
        for (const key of keys) {
          const [segment, kind, ...rest] = key.slice(top.length).split('/');
          if (!segment || rest.length > 0 || (kind !== 'providers' && kind !== 'consumers')) continue;
          const count = counts.get(segment) ?? { providers: 0, consumers: 0 };
          count[kind] = Number(await cmd.eval(COUNT_SCRIPT, 1, key, `${key}/`));
          counts.set(segment, count);
        }
      } while (cursor !== '0' && scanned < INVENTORY_MAX_KEYS);
      return counts;
    },
    async consumerEntries(segment) {
      const set = consumersPath(options.root, segment);
      return storedEntries(set, (await cmd.eval(READ_SCRIPT, 1, set, `${set}/`)) as Array<string | number>);
    },
    async readConfig(segment) {
      // at most one byte more than a record may be: a larger value is reported, never read whole
      const bytes = await cmd.getrangeBuffer(configPath(options.root, segment), 0, MAX_RECORD_BYTES);
      return { value: bytes.length === 0 ? undefined : bytes, version: contentDigest(bytes) };
    },
    async writeConfig(segment, value, version) {
      const path = configPath(options.root, segment);
      // compare-and-set in one script; no expiry: the override record outlives every process
      const args = [version, MAX_RECORD_BYTES, ...(value === undefined ? ['del'] : ['set', value])];
      return Number(await cmd.eval(CONFIG_CAS_SCRIPT, 1, path, ...args)) === 1;
    },
    unwatch(segment) {
      const follow = follows.get(segment);
      if (!follow) return;
      follows.delete(segment);
      clearTimeout(follow.timer);
      if (sub.status === 'ready') sub.unsubscribe(providersPath(options.root, segment)).catch(() => {});
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      for (const follow of follows.values()) clearTimeout(follow.timer);
      follows.clear();
      connected.fail(new Error(`registry ${address.raw} closed`));
      await Promise.all([shutdown(cmd), shutdown(sub)]);
    },
  };
}
