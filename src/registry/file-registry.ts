/**
 * The embedded registry (`file://<dir>`): no server, one JSON file per entry, for one machine or a
 * shared directory.
 *
 *   <dir>/callisto/<service>:<version>/providers/<host>:<port>.json
 *   <dir>/callisto/<service>:<version>/consumers/<host>:<pid>.json
 *   <dir>/callisto/<service>:<version>/config.json     the override record (runtime control), persistent
 *
 * Files are written atomically (temp file + rename) and touched every ttl/3 while this instance lives;
 * a file whose mtime is older than the TTL belongs to a dead process: it is ignored and deleted.
 * Subscribers follow a directory with `fs.watch` plus polling every min(ttl/5, 500 ms), so a SIGKILLed
 * provider disappears within TTL + 0.5 s and a clean unregister is seen at once.
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
  /** Per file name: the stat it was read at, and what was read. */
  readonly cache: Map<string, { version: string; entry: StoredEntry }>;
  running: boolean;
  dirty: boolean;
  closed: boolean;
  /** Why the directory itself could not be listed (reported once), if it could not. */
  failure: string | undefined;
}

function createFileDriver(base: string, context: RegistryContext): RegistryDriver {
  const { ttlMs, root } = context.options;
  const pollMs = Math.max(50, Math.min(FILE_REGISTRY_MAX_POLL_MS, Math.floor(ttlMs / 5)));
  const fileOf = (path: string): string => `${join(base, ...path.split('/'))}.json`;
  const configFileOf = (segment: string): string =>
    `${join(base, ...root.split('/'), segment, 'config')}.json`;
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

  /** One file of a list; undefined when it is gone, or stale (then it is deleted). */
  const readEntry = async (state: WatchState, name: string): Promise<StoredEntry | undefined> => {
    const file = join(state.dir, name);
    let info: Stats;
    try {
      info = await stat(file);
    } catch (error) {
      return isNotFound(error) ? undefined : { key: file, problem: `cannot stat: ${describeError(error)}` };
    }
    if (!info.isFile()) return { key: file, problem: `${fileKind(info)}, not a record file` };
    if (Date.now() - info.mtimeMs > ttlMs) {
      await unlink(file).catch(() => {});
      return undefined;
    }
    const version = `${info.ino}:${info.size}:${info.mtimeMs}`;
    const cached = state.cache.get(name);
    if (cached?.version === version) return cached.entry;
    const entry = await readRecordFile(file);
    if (entry) state.cache.set(name, { version, entry });
    return entry;
  };

  const readList = async (state: WatchState): Promise<StoredEntry[]> => {
    let names: string[];
    try {
      names = await readdir(state.dir);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await mkdir(state.dir, { recursive: true });
      names = [];
    }
    const entries: StoredEntry[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const entry = await readEntry(state, name);
      if (entry === undefined) continue;
      seen.add(name);
      entries.push(entry);
    }
    for (const name of state.cache.keys()) if (!seen.has(name)) state.cache.delete(name);
    return entries;
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
        const list = await readList(state);
        if (state.closed) return;
        if (state.failure !== undefined) context.log('info', `can read ${state.dir} again`);
        state.failure = undefined;
        context.deliver(segment, list);
        if (!state.watcher) startWatcher(segment, state);
      } while (state.dirty && !state.closed);
    } catch (error) {
      // reported once per distinct failure, not every poll; the last list stays
      const failure = describeError(error);
      if (failure !== state.failure && !state.closed) {
        context.log('warn', `cannot read ${state.dir}: ${failure}; keeping the last list`);
      }
      state.failure = failure;
    } finally {
      state.running = false;
    }
  };

  const startWatcher = (segment: string, state: WatchState): void => {
    try {
      const watcher = fsWatch(state.dir, { persistent: true }, () => {
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
      const entry = await readRecordFile(configFileOf(segment));
      if (entry?.problem !== undefined) throw new Error(entry.problem);
      return entry?.value;
    },
    async writeConfig(segment, value) {
      const file = configFileOf(segment);
      if (value !== undefined) await track(writeFileAtomic(file, value));
      else
        await track(unlink(file)).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
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
