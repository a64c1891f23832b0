/**
 * The snapshot files of a followed service, one per registry (as Dubbo keeps a cache file per
 * registry): each registry's last delivered list is kept in `<snapshotDir>/<registry>/<service>.json`,
 * and at start each registry that has not answered in time is stood in for by its own file, while the
 * registries that did answer are followed live. The `<registry>` folder name is derived from the address
 * safely: kind and hosts only (credentials `user:secret@` and secret-looking query parameters are
 * dropped), characters outside `[A-Za-z0-9.-]` replaced, and a short hash of the same parts so two
 * addresses that sanitize alike stay apart.
 */
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { writeFileAtomic } from '../registry/file-registry.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import { validateProviderRecord } from '../registry/record-validation.js';
import { normalizeProviders } from '../registry/registry-paths.js';
import { describeError } from '../registry/timing.js';

/** Query parameters whose values never reach a file name, not even hashed. */
const SECRET_PARAM = /pass|secret|token|cred|auth|key/i;
const MAX_NAME_LENGTH = 64;

/** The snapshot folder name of the registry at `address` (no secrets in it). */
export function registrySnapshotName(address: string): string {
  const trimmed = address.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s.exec(trimmed);
  const kind = (scheme?.[1] ?? 'registry').toLowerCase();
  const rest = scheme?.[2] ?? trimmed;
  const queryAt = rest.indexOf('?');
  const body = (queryAt === -1 ? rest : rest.slice(0, queryAt))
    .split(',')
    .map((entry) => entry.trim().replace(/^[^/]*@/, ''))
    .join(',');
  const params =
    queryAt === -1
      ? []
      : [...new URLSearchParams(rest.slice(queryAt + 1))]
          .filter(([key]) => !SECRET_PARAM.test(key))
          .map(([key, value]) => `${key}=${value}`)
          .sort();
  const readable = `${kind}-${body}`
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .replace(/^[_.]+|_+$/g, '')
    .replace(/^([a-z0-9+.-]*)-_+/, '$1-')
    .slice(0, MAX_NAME_LENGTH);
  const hash = createHash('sha256')
    .update([kind, body, ...params].join('\n'))
    .digest('hex')
    .slice(0, 8);
  return `${readable}-${hash}`;
}

/** `<dir>/<registry>/<segment>.json` for each address; none when `dir` is '' (snapshots off). */
export function registrySnapshotPaths(
  dir: string,
  addresses: readonly string[],
  segment: string,
): Array<string | undefined> {
  return addresses.map((address) =>
    dir ? `${dir}/${registrySnapshotName(address)}/${segment}.json` : undefined,
  );
}

interface SnapshotFile {
  service: string;
  savedAt: string;
  providers: ProviderRecord[];
}

export interface SnapshotStore {
  /** Writes `list` to `path` (after the writes before it); a failure is logged, not thrown. */
  save(path: string, list: ProviderRecord[]): void;
  /** The validated list in `path`, or undefined (logged) when there is no usable file. */
  load(path: string): Promise<ProviderRecord[] | undefined>;
  /** Resolves once the writes asked for so far are done. */
  flushed(): Promise<void>;
}

/** Reads and writes snapshot files of the service `segment`, writes in order, one at a time. */
export function createSnapshotStore(
  segment: string,
  log: (level: 'info' | 'warn' | 'error', message: string) => void,
): SnapshotStore {
  let writing: Promise<void> = Promise.resolve();
  return {
    save(path, list) {
      const content: SnapshotFile = { service: segment, savedAt: new Date().toISOString(), providers: list };
      writing = writing
        .then(() => writeFileAtomic(path, `${JSON.stringify(content, null, 2)}\n`))
        .catch((error) => log('warn', `${segment}: cannot write snapshot ${path}: ${describeError(error)}`));
    },
    async load(path) {
      try {
        // only a regular file is opened: reading a FIFO put there would never end
        if (!(await stat(path)).isFile()) throw new Error('not a regular file');
        const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<SnapshotFile>;
        const records = Array.isArray(parsed.providers) ? parsed.providers : [];
        return normalizeProviders(records.flatMap((r) => validateProviderRecord(r, Date.now()).record ?? []));
      } catch (error) {
        log('warn', `${segment}: no usable snapshot at ${path}: ${describeError(error)}`);
        return undefined;
      }
    },
    flushed: () => writing,
  };
}
