/**
 * The embedded registry (`file://<dir>`): no server, one JSON file per entry, for one machine or a
 * shared directory.
 *
 *   <dir>/callisto/<service>:<version>/providers/<host>:<port>.json
 *   <dir>/callisto/<service>:<version>/consumers/<host>:<pid>.json
 *
 * Files are written atomically (temp file + rename) and touched every ttl/3 while this instance lives;
 * a file whose mtime is older than the TTL belongs to a dead process: it is ignored and deleted.
 * Subscribers follow a directory with `fs.watch` plus polling every min(ttl/5, 500 ms), so a SIGKILLed
 * provider disappears within TTL + 0.5 s and a clean unregister is seen at once.
 */
import { type FSWatcher, watch as fsWatch } from 'node:fs';
import { mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { ProviderRecord } from './provider-record.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { resolveRegistryOptions } from './registry-options.js';
import { decodeProviderRecord, providersPath } from './registry-paths.js';
import { createRegistryShell, type RegistryContext, type RegistryDriver } from './registry-shell.js';

/** Polling bound of the file registry: a change is seen within this even when fs.watch misses it. */
export const FILE_REGISTRY_MAX_POLL_MS = 500;

export function createFileRegistry(address: RegistryAddress, options?: Partial<RegistryOptions>): Registry {
  const resolved = resolveRegistryOptions(address, options);
  const base = resolve(address.hosts[0] ?? '.callisto');
  return createRegistryShell('file', address, resolved, (context) => createFileDriver(base, context));
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

interface WatchState {
  readonly dir: string;
  watcher: FSWatcher | undefined;
  readonly poll: NodeJS.Timeout;
  readonly cache: Map<string, { key: string; record: ProviderRecord | undefined }>;
  running: boolean;
  dirty: boolean;
  closed: boolean;
}

function createFileDriver(base: string, context: RegistryContext): RegistryDriver {
  const { ttlMs, root } = context.options;
  const pollMs = Math.max(50, Math.min(FILE_REGISTRY_MAX_POLL_MS, Math.floor(ttlMs / 5)));
  const fileOf = (path: string): string => `${join(base, ...path.split('/'))}.json`;
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

  const readList = async (state: WatchState): Promise<ProviderRecord[]> => {
    let names: string[];
    try {
      names = await readdir(state.dir);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await mkdir(state.dir, { recursive: true });
      names = [];
    }
    const records: ProviderRecord[] = [];
    const seen = new Set<string>();
    for (const name of names) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const file = join(state.dir, name);
      try {
        const info = await stat(file);
        if (Date.now() - info.mtimeMs > ttlMs) {
          await unlink(file).catch(() => {});
          continue;
        }
        seen.add(name);
        const key = `${info.ino}:${info.size}`;
        let cached = state.cache.get(name);
        if (cached?.key !== key) {
          cached = { key, record: decodeProviderRecord(await readFile(file, 'utf8')) };
          state.cache.set(name, cached);
        }
        if (cached.record) records.push(cached.record);
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    for (const name of state.cache.keys()) if (!seen.has(name)) state.cache.delete(name);
    return records;
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
        context.deliver(segment, list);
        if (!state.watcher) startWatcher(segment, state);
      } while (state.dirty && !state.closed);
    } catch (error) {
      context.log('warn', `cannot read ${state.dir}: ${(error as Error).message}`);
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
      };
      watches.set(segment, state);
      void track(refresh(segment, state));
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
