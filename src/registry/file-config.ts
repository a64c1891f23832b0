/**
 * The override record of the file registry (`<dir>/<root>/<seg>/config.json`), changed with
 * compare-and-set: the writer takes an exclusive lock file beside it (`.config.lock`, created with
 * O_EXCL, so exactly one writer holds it, in any process on the machine or sharing the directory),
 * reads the record again, writes it (temp file + rename: readers never see half a record) only if its
 * content digest is still the one the change was computed from, and removes the lock. A lock held by
 * someone else is a conflict (the update pauses and tries again, override-update.ts). A lock older than
 * FILE_CONFIG_LOCK_STALE_MS was left by a writer that died while holding it (a write takes
 * milliseconds): it is moved aside and removed, and if what was moved turns out to be a fresh lock (two
 * writers breaking the same stale lock at once), it is linked back (link fails if a lock exists).
 * Writers that edit the file by hand bypass the lock; consumers only read the file and never wait.
 */
import { link, mkdir, open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { contentDigest } from './override-update.js';
import type { StoredEntry } from './record-reader.js';
import type { StoredConfig } from './registry-shell.js';

/** A lock file older than this, ms, was left by a writer that died holding it. */
export const FILE_CONFIG_LOCK_STALE_MS = 10_000;

/** The lock file that guards a record file. */
export function lockFileOf(file: string): string {
  return join(dirname(file), '.config.lock');
}

export interface FileConfigParts {
  /** Reads a record file without blocking; undefined when it is gone. */
  read(file: string): Promise<StoredEntry | undefined>;
  /** Writes a file atomically (temp file + rename), creating its directory. */
  write(file: string, content: string): Promise<void>;
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

export async function readFileConfig(parts: FileConfigParts, file: string): Promise<StoredConfig> {
  const entry = await parts.read(file);
  if (entry?.problem !== undefined) throw new Error(entry.problem);
  const value = entry?.value;
  return { value, version: contentDigest(value ?? '') };
}

/** Moves a stale lock aside; a fresh one moved by mistake is put back. */
async function breakStaleLock(lock: string): Promise<void> {
  const aside = `${lock}.${process.pid}.${Math.random().toString(36).slice(2)}.stale`;
  try {
    await rename(lock, aside);
  } catch {
    return; // gone already: someone else broke it or its owner finished
  }
  const info = await stat(aside).catch(() => undefined);
  if (info && Date.now() - info.mtimeMs <= FILE_CONFIG_LOCK_STALE_MS) {
    await link(aside, lock).catch(() => {});
  }
  await unlink(aside).catch(() => {});
}

/** Takes the lock: true when held, false when another writer holds it. */
async function takeLock(lock: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lock, 'wx');
      await handle.writeFile(`${process.pid}\n`).finally(() => handle.close());
      return true;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
    }
    const info = await stat(lock).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs <= FILE_CONFIG_LOCK_STALE_MS) return false;
    await breakStaleLock(lock);
  }
  return false;
}

export async function writeFileConfig(
  parts: FileConfigParts,
  file: string,
  value: string | undefined,
  version: string,
): Promise<boolean> {
  const lock = lockFileOf(file);
  let held: boolean;
  try {
    held = await takeLock(lock);
  } catch (error) {
    if (codeOf(error) !== 'ENOENT') throw error;
    // the service's directory does not exist yet
    await mkdir(dirname(lock), { recursive: true });
    held = await takeLock(lock);
  }
  if (!held) return false;
  try {
    const current = await readFileConfig(parts, file);
    if (current.version !== version) return false;
    if (value !== undefined) await parts.write(file, value);
    else
      await unlink(file).catch((error: unknown) => {
        if (codeOf(error) !== 'ENOENT') throw error;
      });
    return true;
  } finally {
    await unlink(lock).catch(() => {});
  }
}
