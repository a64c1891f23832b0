/**
 * The embedded registry (`file://<dir>`): no server, one JSON file per entry, for one machine or a
 * shared directory.
 *
 *   <dir>/callisto/<service>:<version>/providers/<host>:<port>.json
 *   <dir>/callisto/<service>:<version>/consumers/<host>:<pid>:<instance>.json
 *   <dir>/callisto/<service>:<version>/config.json     the override record (runtime control), persistent,
 *                                                      changed under a lock file (file-config.ts)
 *
 * Files are written atomically (temp file + rename) and touched every ttl/3 while this instance lives;
 * a file whose mtime is older than the TTL belongs to a dead process: it is ignored and deleted.
 * Subscribers follow a directory with `fs.watch` plus polling every min(ttl/5, 500 ms), so a SIGKILLed
 * provider disappears within TTL + 0.5 s and a clean unregister is seen at once. What a poll costs does
 * not grow with the number of files: the whole directory is read again only when it changed (its own
 * mtime moves with every create, remove and rename), a rename event names the one file to look at, and
 * each file is looked at again only when its expiry comes (mtime + TTL), not at every poll nor at every
 * touch; a file whose inode and size did not change is taken as touched, and its content read again at
 * the latest 2 TTLs after the last read (so an edit in place that keeps the size is seen within 2 TTLs;
 * Callisto replaces files, which is seen at once). Thousands of files in directories followed by dozens
 * of consumers made polls and touch events saturate a machine before: docs/scaling.md.
 *
 * Reading never blocks and one bad entry never stops the list: only regular files are opened (a
 * directory, FIFO or socket named `x.json` is reported and skipped), they are opened non-blocking and
 * checked again after opening, files larger than a record may be are not read, and a file that cannot be
 * read (permission denied) is reported and skipped like an invalid record.
 */
import { constants, type FSWatcher, watch as fsWatch, type Stats } from 'node:fs';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  rename,
  stat,
  unlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { readFileConfig, writeFileConfig } from './file-config.js';
import type { StoredEntry } from './record-reader.js';
import { MAX_RECORD_BYTES } from './record-validation.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { resolveRegistryOptions } from './registry-options.js';
import { consumersPath, providersPath } from './registry-paths.js';
import {
  createRegistryShell,
  type EntryCounts,
  type RegistryContext,
  type RegistryDriver,
} from './registry-shell.js';
import { describeError } from './timing.js';

/** Polling bound of the file registry: a change is seen within this even when fs.watch misses it. */
export const FILE_REGISTRY_MAX_POLL_MS = 500;

/** Files a listing (`services()`) checks for staleness at most; beyond it names are counted unchecked. */
export const LISTING_MAX_FILES = 10_000;

export function createFileRegistry(address: RegistryAddress, options?: Partial<RegistryOptions>): Registry {
  const resolved = resolveRegistryOptions(address, options);
  const base = resolve(address.hosts[0] ?? '.callisto');
  return createRegistryShell('file', address, resolved, (context) => createFileDriver(base, context), {
    location: `file://${base}`,
  });
}

/** Writes `content` to `file` atomically: a temp file in the same directory, then a rename. */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = join(
    dirname(file),
    `.${process.pid}.${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  try {
    await writeFile(temp, content);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

function isNotFound(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ENOENT';
}

function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Reads one record file without ever blocking: opened non-blocking (a FIFO swapped in after `stat`
 * cannot hold the read), checked to be a regular file of at most MAX_RECORD_BYTES, read up to its size.
 * Undefined when the file is gone.
 */
async function readRecordFile(file: string): Promise<StoredEntry | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    return { key: file, problem: `cannot open: ${describeError(error)}` };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { key: file, problem: `${fileKind(info)}, not a record file` };
    if (info.size > MAX_RECORD_BYTES) {
      return { key: file, problem: `${info.size} bytes, more than ${MAX_RECORD_BYTES}` };
    }
    const buffer = Buffer.alloc(info.size);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return { key: file, value: buffer.subarray(0, length) };
  } catch (error) {
    return { key: file, problem: `cannot read: ${describeError(error)}` };
  } finally {
    await handle.close().catch(() => {});
  }
}

interface CachedEntry {
  /** The stat it was read at (`ino:size:mtime`). */
  version: string;
  entry: StoredEntry;
  /** When its content was last read (a touched file is read again after 2 TTLs at the latest). */
  readAt: number;
  /** When it would be stale unless touched again (mtime + TTL): checked then, not before. */
  expiresAt: number;
}

/**
 * The entry files of a directory that are not stale (written or touched within the TTL; anything that
 * is not a regular file counts, as an entry that cannot be read). Nothing is deleted: a listing only
 * looks. After `budget.files` checks, names are counted without one.
 */
async function liveEntryNames(dir: string, ttlMs: number, budget: { files: number }): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if (isNotFound(error) || (error as { code?: unknown }).code === 'ENOTDIR') return [];
    throw error;
  }
  const live: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.')) continue;
    if (budget.files <= 0) {
      live.push(name);
      continue;
    }
    budget.files--;
    const info = await stat(join(dir, name)).catch(() => undefined);
    if (info && (!info.isFile() || Date.now() - info.mtimeMs <= ttlMs)) live.push(name);
  }
  return live;
}

interface WatchState {
  readonly dir: string;
  watcher: FSWatcher | undefined;
  readonly poll: NodeJS.Timeout;
  /** Per file name: what was read, and when to check it again. */
  readonly cache: Map<string, CachedEntry>;
  /** The directory's stat at the last full read: entries are created, removed and replaced by rename. */
  dirVersion: string | undefined;
  /** A full read is wanted (at the start, after the directory changed). */
  full: boolean;
  /** File names an `fs.watch` rename event named, to look at one by one. */
  readonly named: Set<string>;
  running: boolean;
  dirty: boolean;
  closed: boolean;
  /** Why the directory itself could not be listed (reported once), if it could not. */
  failure: string | undefined;
}

const versionOf = (info: Stats): string => `${info.ino}:${info.size}:${info.mtimeMs}`;

/** Whether two `ino:size:mtime` versions have the same inode and size (a touch moves only the times). */
function sameInodeAndSize(a: string, b: string): boolean {
  return a.slice(0, a.lastIndexOf(':')) === b.slice(0, b.lastIndexOf(':'));
}

function sameEntry(a: StoredEntry, b: StoredEntry): boolean {
  if (a.problem !== b.problem) return false;
  if (a.value === undefined || b.value === undefined) return a.value === b.value;
  return Buffer.from(a.value).equals(Buffer.from(b.value));
}

function createFileDriver(base: string, context: RegistryContext): RegistryDriver {
  const { ttlMs, root } = context.options;
  const pollMs = Math.max(50, Math.min(FILE_REGISTRY_MAX_POLL_MS, Math.floor(ttlMs / 5)));
  const fileOf = (path: string): string => `${join(base, ...path.split('/'))}.json`;
  const configFileOf = (segment: string): string =>
    `${join(base, ...root.split('/'), segment, 'config')}.json`;
  const configParts = { read: readRecordFile, write: writeFileAtomic };
  const watches = new Map<string, WatchState>();
  const inFlight = new Set<Promise<unknown>>();
  let refreshTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const track = <T>(promise: Promise<T>): Promise<T> => {
    inFlight.add(promise);
    promise.then(
      () => inFlight.delete(promise),
      () => inFlight.delete(promise),
    );
    return promise;
  };

  const keepAlive = async (): Promise<void> => {
    const now = new Date();
    for (const [path, value] of context.registered) {
      const file = fileOf(path);
      try {
        await utimes(file, now, now);
      } catch (error) {
        if (!isNotFound(error)) continue;
        // removed by a consumer that thought us dead (or by hand): write it again
        if (context.registered.get(path) === value) await writeFileAtomic(file, value).catch(() => {});
      }
    }
  };

  const ensureRefreshTimer = (): void => {
    if (refreshTimer || closed) return;
    refreshTimer = setInterval(
      () => {
        void track(keepAlive());
      },
      Math.max(50, Math.floor(ttlMs / 3)),
    );
  };

  /**
   * Looks at one file of a directory and updates the cache: read when new or changed, dropped when gone,
   * deleted when stale (its writer is dead). Returns whether the list changed.
   */
  const lookAt = async (state: WatchState, name: string): Promise<boolean> => {
    if (!name.endsWith('.json') || name.startsWith('.')) return false;
    const file = join(state.dir, name);
    const cached = state.cache.get(name);
    let info: Stats;
    try {
      info = await stat(file);
    } catch (error) {
      if (isNotFound(error)) return state.cache.delete(name);
      const entry = { key: file, problem: `cannot stat: ${describeError(error)}` };
      state.cache.set(name, {
        version: entry.problem,
        entry,
        readAt: Date.now(),
        expiresAt: Date.now() + ttlMs,
      });
      return cached?.entry.problem !== entry.problem;
    }
    const expiresAt = info.mtimeMs + ttlMs;
    if (!info.isFile()) {
      const entry = { key: file, problem: `${fileKind(info)}, not a record file` };
      state.cache.set(name, {
        version: versionOf(info),
        entry,
        readAt: Date.now(),
        expiresAt: Date.now() + ttlMs,
      });
      return cached?.entry.problem !== entry.problem;
    }
    if (expiresAt < Date.now()) {
      await unlink(file).catch(() => {});
      return state.cache.delete(name);
    }
    const version = versionOf(info);
    if (cached?.version === version) {
      cached.expiresAt = expiresAt;
      return false;
    }
    const now = Date.now();
    if (
      cached?.entry.value !== undefined &&
      sameInodeAndSize(cached.version, version) &&
      now - cached.readAt < 2 * ttlMs
    ) {
      // only the times moved: a keep-alive touch (an edit in place that keeps the size is read at the
      // latest 2 TTLs after the last read; a replaced or resized file at once)
      cached.version = version;
      cached.expiresAt = expiresAt;
      return false;
    }
    // new, replaced, resized, or not read for 2 TTLs: read it (the content decides whether it changed)
    const entry = await readRecordFile(file);
    if (entry === undefined) return state.cache.delete(name);
    state.cache.set(name, { version, entry, expiresAt, readAt: now });
    return cached === undefined || !sameEntry(cached.entry, entry);
  };

  /** Lists the directory and looks at every file in it. */
  const readAll = async (state: WatchState): Promise<void> => {
    let dirInfo: Stats;
    let names: string[];
    try {
      // the directory's stat before its listing: a change during the listing is seen at the next poll
      dirInfo = await stat(state.dir);
      names = await readdir(state.dir);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      // not there yet: create it, then list it like any other (a writer may have been quicker)
      await mkdir(state.dir, { recursive: true });
      dirInfo = await stat(state.dir);
      names = await readdir(state.dir);
    }
    state.dirVersion = versionOf(dirInfo);
    const present = new Set(names);
    for (const name of [...state.cache.keys()]) if (!present.has(name)) state.cache.delete(name);
    for (const name of names) await lookAt(state, name);
  };

  /**
   * What changed since the last look, at the least cost: the whole directory when it changed (or a
   * full read is due), else the files an event named and the files whose expiry has come.
   */
  const update = async (state: WatchState): Promise<boolean> => {
    if (!state.full) {
      const dirInfo = await stat(state.dir).catch(() => undefined);
      if (dirInfo === undefined || versionOf(dirInfo) !== state.dirVersion) state.full = true;
    }
    if (state.full) {
      state.full = false;
      state.named.clear();
      await readAll(state);
      return true;
    }
    let changed = false;
    const now = Date.now();
    const names = new Set(state.named);
    state.named.clear();
    for (const [name, cached] of state.cache) if (cached.expiresAt <= now) names.add(name);
    for (const name of names) if (await lookAt(state, name)) changed = true;
    return changed;
  };

  const refresh = async (segment: string, state: WatchState): Promise<void> => {
    if (state.running) {
      state.dirty = true;
      return;
    }
    state.running = true;
    try {
      do {
        state.dirty = false;
        const changed = await update(state);
        if (state.closed) return;
        if (state.failure !== undefined) context.log('info', `can read ${state.dir} again`);
        state.failure = undefined;
        if (changed)
          context.deliver(
            segment,
            [...state.cache.values()].map((cached) => cached.entry),
          );
        if (!state.watcher) startWatcher(segment, state);
      } while (state.dirty && !state.closed);
    } catch (error) {
      // reported once per distinct failure, not every poll; the last list stays
      const failure = describeError(error);
      if (failure !== state.failure && !state.closed) {
        context.log('warn', `cannot read ${state.dir}: ${failure}; keeping the last list`);
      }
      state.failure = failure;
      state.full = true;
    } finally {
      state.running = false;
    }
  };

  const startWatcher = (segment: string, state: WatchState): void => {
    try {
      // A rename (create, delete, replace) names its file: look at that one. A plain change is a touch
      // or an in-place edit: the touch only delays the expiry (checked when due), an edit in place is
      // seen then too, or at once when it changes the directory.
      const watcher = fsWatch(state.dir, { persistent: true }, (event, name) => {
        if (event !== 'rename') return;
        if (name) state.named.add(String(name));
        else state.full = true;
        void track(refresh(segment, state));
      });
      watcher.on('error', () => {
        // fall back to polling; a later refresh tries fs.watch again
        watcher.close();
        if (state.watcher === watcher) state.watcher = undefined;
      });
      state.watcher = watcher;
    } catch {
      state.watcher = undefined;
    }
  };

  context.setStatus('connected');

  return {
    async put(path, value) {
      await track(writeFileAtomic(fileOf(path), value));
      // unregistered (or closed) while writing: do not leave the file behind
      if (closed || !context.registered.has(path)) {
        await track(unlink(fileOf(path))).catch(() => {});
        return;
      }
      ensureRefreshTimer();
    },
    async remove(path) {
      try {
        await track(unlink(fileOf(path)));
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    },
    watch(segment) {
      if (closed || watches.has(segment)) return;
      const state: WatchState = {
        dir: join(base, ...providersPath(root, segment).split('/')),
        watcher: undefined,
        poll: setInterval(() => {
          void track(refresh(segment, state));
        }, pollMs),
        cache: new Map(),
        dirVersion: undefined,
        full: true,
        named: new Set(),
        running: false,
        dirty: false,
        closed: false,
        failure: undefined,
      };
      watches.set(segment, state);
      void track(refresh(segment, state));
    },
    async inventory(match) {
      const top = join(base, ...root.split('/'));
      const counts = new Map<string, number>();
      let segments: string[];
      try {
        segments = await readdir(top);
      } catch (error) {
        if (isNotFound(error)) return counts;
        throw error;
      }
      for (const segment of segments) {
        if (!match(segment)) continue;
        const names = await readdir(join(top, segment, 'providers')).catch(() => [] as string[]);
        counts.set(segment, names.filter((name) => name.endsWith('.json') && !name.startsWith('.')).length);
      }
      return counts;
    },
    async catalog() {
      const top = join(base, ...root.split('/'));
      const counts = new Map<string, EntryCounts>();
      let segments: string[];
      try {
        segments = await readdir(top);
      } catch (error) {
        if (isNotFound(error)) return counts;
        throw error;
      }
      const budget = { files: LISTING_MAX_FILES };
      for (const segment of segments) {
        const providers = await liveEntryNames(join(top, segment, 'providers'), ttlMs, budget);
        const consumers = await liveEntryNames(join(top, segment, 'consumers'), ttlMs, budget);
        counts.set(segment, { providers: providers.length, consumers: consumers.length });
      }
      return counts;
    },
    async consumerEntries(segment) {
      const dir = join(base, ...consumersPath(root, segment).split('/'));
      const entries: StoredEntry[] = [];
      for (const name of await liveEntryNames(dir, ttlMs, { files: LISTING_MAX_FILES })) {
        const entry = await readRecordFile(join(dir, name));
        if (entry) entries.push(entry);
      }
      return entries;
    },
    async readConfig(segment) {
      return readFileConfig(configParts, configFileOf(segment));
    },
    async writeConfig(segment, value, version) {
      return track(writeFileConfig(configParts, configFileOf(segment), value, version));
    },
    unwatch(segment) {
      const state = watches.get(segment);
      if (!state) return;
      watches.delete(segment);
      state.closed = true;
      clearInterval(state.poll);
      state.watcher?.close();
    },
    async close() {
      closed = true;
      clearInterval(refreshTimer);
      for (const segment of [...watches.keys()]) this.unwatch(segment);
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
