/**
 * The part of the registry contract every server-backed implementation shares: bookkeeping of what this
 * instance registered, listeners per service (full lists, never the same list twice in a row), status
 * transitions reported and logged once (and a server that cannot be reached from the start logged at its
 * first failure), stored records checked where they are read (record-reader.ts), what the registry holds
 * for a service name (for NoProvider messages), what it holds overall and the consumers of a service
 * (for operators' tools), and an idempotent close. An engine supplies a small driver (put, remove,
 * watch, unwatch, inventory, close; catalog and consumerEntries for the listings) and calls back
 * through the context.
 */
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import { parseConsumerRecord } from './consumer-record-check.js';
import type { StoredConfig } from './override-update.js';
import { type ConsumerRecord, type ProviderRecord, parseServicePathSegment } from './provider-record.js';
import { createRecordReader, type RecordReader, type StoredEntry } from './record-reader.js';
import type {
  ProviderListener,
  Registry,
  RegistryAddress,
  RegistryOptions,
  RegistryStatus,
  ServiceHolding,
  ServiceListing,
} from './registry.js';
import { operationTimeoutMs } from './registry-options.js';
import { createOverrideFollower } from './registry-overrides.js';
import { consumerPath, encodeRecord, normalizeProviders, providerPath, segmentOf } from './registry-paths.js';
import { withTimeout } from './timing.js';

export type { StoredConfig };

/** What a driver may see of and do to the registry it serves. */
export interface RegistryContext {
  readonly address: RegistryAddress;
  readonly options: RegistryOptions;
  /** Everything this instance has registered: path -> stored JSON. Re-put after a reconnect. */
  readonly registered: ReadonlyMap<string, string>;
  /** Segments (`servicePathSegment`) that have at least one listener. */
  watched(): string[];
  /**
   * Delivers the full current list of a segment, as stored; the shell checks every entry, skips (and
   * logs once) the invalid ones, and tells listeners only about real changes.
   */
  deliver(segment: string, entries: Iterable<StoredEntry>): void;
  /**
   * Reports connectivity; repeating the current status only updates the reason, so drivers may call it
   * freely (and should, with the reason, on every failed attempt: the first one is logged when the
   * server has never been reached).
   */
  setStatus(status: RegistryStatus, reason?: string): void;
  readonly status: RegistryStatus;
  /** Logs through `options.log`, prefixed with the address. */
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/** The engine-specific part of a registry. */
export interface RegistryDriver {
  /** Writes (or replaces) an entry that lives as long as this instance. */
  put(path: string, value: string): Promise<void>;
  /** Deletes an entry at once. */
  remove(path: string): Promise<void>;
  /** Starts following a segment; the driver calls `deliver` with its list as soon as it is known. */
  watch(segment: string): void;
  /** Stops following a segment. */
  unwatch(segment: string): void;
  /**
   * The segments under the root that `match` accepts, with their number of provider entries (valid or
   * not). Bounded: an engine may stop listing after a few thousand keys.
   */
  inventory(match: (segment: string) => boolean): Promise<Map<string, number>>;
  /**
   * Every segment under the root with its live (not expired, not stale) provider and consumer entries
   * counted, valid or not. Bounded like `inventory`. Without it the registry offers no `services()`.
   */
  catalog?(): Promise<Map<string, EntryCounts>>;
  /** The stored consumer entries of a segment (none when it has none). Without it, no `consumers()`. */
  consumerEntries?(segment: string): Promise<StoredEntry[]>;
  /**
   * The stored override record of a segment (`<root>/<segment>/config`, value undefined when there is
   * none) and the version it was read at. With `writeConfig`, gives the registry its runtime control
   * (registry-overrides.ts, override-update.ts).
   */
  readConfig?(segment: string): Promise<StoredConfig>;
  /**
   * Compare-and-set of the override record of a segment: writes `value` (persistent: no lease, TTL or
   * session; undefined deletes it) only if the record is still at `version` (as `readConfig` gave it,
   * the record being absent included), atomically on the server. Resolves false, writing nothing, when
   * another writer changed it (or holds it) meanwhile; rejects when the server cannot be asked.
   */
  writeConfig?(segment: string, value: string | undefined, version: string): Promise<boolean>;
  /** Releases every connection, timer and watcher. */
  close(): Promise<void>;
}

/** Live entries of one segment, by kind. */
export interface EntryCounts {
  providers: number;
  consumers: number;
}

/** services() order: name, then version, then group. */
function compareListings(a: ServiceListing, b: ServiceListing): number {
  const text = (x: ServiceListing) => [x.name, x.version, x.group];
  const [left, right] = [text(a), text(b)];
  for (let i = 0; i < left.length; i++) {
    if (left[i]! !== right[i]!) return left[i]! < right[i]! ? -1 : 1;
  }
  return 0;
}

/** What an engine adds to the shell besides its driver. */
export interface RegistryShellOptions {
  /** Where entries are kept, for messages (default: the address). */
  location?: string;
}

interface ListenerEntry {
  readonly listener: ProviderListener;
  last: string | undefined;
  delivered: () => void;
  failed: (error: unknown) => void;
}

interface Subscription {
  readonly entries: Set<ListenerEntry>;
  readonly reader: RecordReader;
  list: ProviderRecord[] | undefined;
  json: string | undefined;
}

export function createRegistryShell(
  kind: string,
  address: RegistryAddress,
  options: RegistryOptions,
  createDriver: (context: RegistryContext) => RegistryDriver,
  shellOptions: RegistryShellOptions = {},
): Registry {
  const registered = new Map<string, string>();
  const subscriptions = new Map<string, Subscription>();
  const statusListeners = new Set<(status: RegistryStatus) => void>();
  const location = shellOptions.location ?? address.raw;
  let status: RegistryStatus = 'disconnected';
  let lastError: string | undefined;
  let everConnected = false;
  let firstFailureLogged = false;
  let closing: Promise<void> | undefined;

  const log = (level: 'info' | 'warn' | 'error', message: string): void => {
    try {
      options.log(level, `registry ${address.raw}: ${message}`);
    } catch {
      // a failing logger must not break the registry
    }
  };

  const deliverTo = (entry: ListenerEntry, sub: Subscription): void => {
    if (sub.list === undefined || entry.last === sub.json) return;
    entry.last = sub.json;
    try {
      entry.listener(sub.list.slice());
    } catch (error) {
      log('error', `a provider listener threw: ${error instanceof Error ? error.message : String(error)}`);
    }
    entry.delivered();
  };

  const context: RegistryContext = {
    address,
    options,
    registered,
    watched: () => [...subscriptions.keys()],
    deliver(segment, entries) {
      const sub = subscriptions.get(segment);
      if (!sub || closing) return;
      const list = normalizeProviders(sub.reader.read(entries));
      sub.list = list;
      sub.json = JSON.stringify(list);
      for (const entry of [...sub.entries]) deliverTo(entry, sub);
    },
    setStatus(next, reason) {
      if (closing) return;
      if (next === 'disconnected' && (reason !== undefined || everConnected)) {
        lastError = reason ?? lastError ?? 'connection lost';
      }
      if (next === status) {
        if (next === 'disconnected' && !everConnected && !firstFailureLogged && reason) {
          firstFailureLogged = true;
          log(
            'warn',
            `cannot reach the server: ${reason}; retrying (backoff up to ${options.maxBackoffMs} ms)`,
          );
        }
        return;
      }
      status = next;
      if (next === 'connected') {
        everConnected = true;
        lastError = undefined;
        log('info', 'connected');
      } else log('warn', `disconnected${reason ? `: ${reason}` : ''}; keeping the last known lists`);
      for (const listener of [...statusListeners]) {
        try {
          listener(next);
        } catch (error) {
          log('error', `a status listener threw: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    },
    get status() {
      return status;
    },
    log,
  };

  const driver = createDriver(context);
  /** Per segment: the invalid consumer entries already reported, with their problem (logged once). */
  const consumerReports = new Map<string, Map<string, string>>();

  const services = async (): Promise<ServiceListing[]> => {
    ensureOpen('services');
    const catalog = await withTimeout(driver.catalog!(), operationTimeoutMs(options), 'services');
    const listings: ServiceListing[] = [];
    for (const [segment, counts] of catalog) {
      const key = parseServicePathSegment(segment);
      if (key === undefined || counts.providers + counts.consumers === 0) continue;
      listings.push({ name: key.name, version: key.version, group: key.group, ...counts });
    }
    return listings.sort(compareListings);
  };

  const consumers = async (key: ServiceKey): Promise<ConsumerRecord[]> => {
    ensureOpen('consumers');
    const segment = segmentOf(key);
    const entries = await withTimeout(
      driver.consumerEntries!(segment),
      operationTimeoutMs(options),
      'consumers',
    );
    const reported = consumerReports.get(segment) ?? new Map<string, string>();
    const stillBad = new Map<string, string>();
    const records: ConsumerRecord[] = [];
    for (const entry of entries) {
      const check =
        entry.value === undefined
          ? { problem: entry.problem ?? 'unreadable', record: undefined }
          : parseConsumerRecord(entry.value);
      if (check.record) {
        records.push(check.record);
        continue;
      }
      if (reported.get(entry.key) !== check.problem) {
        log('warn', `skipped consumer entry ${entry.key}: ${check.problem}`);
      }
      stillBad.set(entry.key, check.problem);
    }
    if (stillBad.size > 0) consumerReports.set(segment, stillBad);
    else consumerReports.delete(segment);
    return records.sort((a, b) => (a.host === b.host ? a.pid - b.pid : a.host < b.host ? -1 : 1));
  };

  const overrides =
    driver.readConfig && driver.writeConfig
      ? createOverrideFollower({
          read: driver.readConfig.bind(driver),
          write: driver.writeConfig.bind(driver),
          pollMs: options.overridePollMs,
          timeoutMs: operationTimeoutMs(options),
          location: (segment) => `${options.root}/${segment}/config`,
          log,
          ensureOpen: (what) => ensureOpen(what),
          connected: () => status === 'connected',
        })
      : undefined;

  const ensureOpen = (what: string): void => {
    if (closing) throw new RpcError('Shutdown', `registry ${address.raw} is closed (${what})`);
  };

  const put = async (path: string, value: string): Promise<void> => {
    registered.set(path, value);
    await driver.put(path, value);
  };

  const remove = async (path: string): Promise<void> => {
    registered.delete(path);
    await driver.remove(path);
  };

  return {
    ...(driver.catalog ? { services } : {}),
    ...(driver.consumerEntries ? { consumers } : {}),
    ...(overrides
      ? {
          readOverrides: overrides.read,
          writeOverrides: overrides.write,
          updateOverrides: overrides.update,
          watchOverrides: overrides.watch,
        }
      : {}),
    kind,
    location,
    get status() {
      return status;
    },
    get lastError() {
      return status === 'connected' ? undefined : lastError;
    },
    async inventory(serviceName: string): Promise<ServiceHolding[]> {
      ensureOpen('inventory');
      const keys = new Map<string, ServiceKey>();
      const match = (segment: string): boolean => {
        const key = parseServicePathSegment(segment);
        if (key?.name !== serviceName) return false;
        keys.set(segment, key);
        return true;
      };
      const counts = await withTimeout(driver.inventory(match), operationTimeoutMs(options), 'inventory');
      return [...counts].flatMap(([segment, providers]) => {
        const key = keys.get(segment);
        return key ? [{ version: key.version, group: key.group, providers }] : [];
      });
    },
    async register(record: ProviderRecord) {
      ensureOpen('register');
      await put(providerPath(options.root, record), encodeRecord(record));
    },
    async unregister(record: ProviderRecord) {
      if (closing) return;
      await remove(providerPath(options.root, record));
    },
    async registerConsumer(record: ConsumerRecord) {
      ensureOpen('registerConsumer');
      await put(consumerPath(options.root, record), encodeRecord(record));
    },
    async unregisterConsumer(record: ConsumerRecord) {
      if (closing) return;
      await remove(consumerPath(options.root, record));
    },
    subscribe(key: ServiceKey, listener: ProviderListener) {
      try {
        ensureOpen('subscribe');
      } catch (error) {
        return Promise.reject(error);
      }
      const segment = segmentOf(key);
      return new Promise<() => void>((resolve, reject) => {
        let sub = subscriptions.get(segment);
        const isNew = sub === undefined;
        if (!sub) {
          sub = {
            entries: new Set(),
            reader: createRecordReader((message) => log('warn', message)),
            list: undefined,
            json: undefined,
          };
          subscriptions.set(segment, sub);
        }
        const current = sub;
        const entry: ListenerEntry = {
          listener,
          last: undefined,
          delivered: () => {},
          failed: reject,
        };
        const unsubscribe = (): void => {
          current.entries.delete(entry);
          if (current.entries.size === 0 && subscriptions.get(segment) === current) {
            subscriptions.delete(segment);
            if (!closing) driver.unwatch(segment);
          }
        };
        entry.delivered = () => {
          entry.delivered = () => {};
          entry.failed = () => {};
          resolve(unsubscribe);
        };
        current.entries.add(entry);
        if (isNew) driver.watch(segment);
        else queueMicrotask(() => deliverTo(entry, current));
      });
    },
    onStatus(listener) {
      statusListeners.add(listener);
      return () => statusListeners.delete(listener);
    },
    close() {
      closing ??= (async () => {
        const paths = [...registered.keys()];
        registered.clear();
        const closedError = new RpcError('Shutdown', `registry ${address.raw} closed before the first list`);
        for (const sub of subscriptions.values()) for (const entry of sub.entries) entry.failed(closedError);
        subscriptions.clear();
        statusListeners.clear();
        overrides?.close();
        if (paths.length > 0) {
          let timer: NodeJS.Timeout | undefined;
          const bound = new Promise<void>((resolve) => {
            timer = setTimeout(resolve, operationTimeoutMs(options));
          });
          await Promise.race([Promise.allSettled(paths.map((path) => driver.remove(path))), bound]);
          clearTimeout(timer);
        }
        await driver.close();
      })();
      return closing;
    },
  };
}
