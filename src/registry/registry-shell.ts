/**
 * The part of the registry contract every server-backed implementation shares: bookkeeping of what this
 * instance registered, listeners per service (full lists, never the same list twice in a row), status
 * transitions reported and logged once, and an idempotent close. An engine supplies a small driver
 * (put, remove, watch, unwatch, close) and calls back through the context.
 */
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import type { ConsumerRecord, ProviderRecord } from './provider-record.js';
import type {
  ProviderListener,
  Registry,
  RegistryAddress,
  RegistryOptions,
  RegistryStatus,
} from './registry.js';
import { operationTimeoutMs } from './registry-options.js';
import { consumerPath, encodeRecord, normalizeProviders, providerPath, segmentOf } from './registry-paths.js';

/** What a driver may see of and do to the registry it serves. */
export interface RegistryContext {
  readonly address: RegistryAddress;
  readonly options: RegistryOptions;
  /** Everything this instance has registered: path -> stored JSON. Re-put after a reconnect. */
  readonly registered: ReadonlyMap<string, string>;
  /** Segments (`servicePathSegment`) that have at least one listener. */
  watched(): string[];
  /** Delivers the full current list of a segment; listeners only hear about real changes. */
  deliver(segment: string, records: Iterable<ProviderRecord>): void;
  /** Reports connectivity; repeating the current status is a no-op, so drivers may call it freely. */
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
  /** Releases every connection, timer and watcher. */
  close(): Promise<void>;
}

interface ListenerEntry {
  readonly listener: ProviderListener;
  last: string | undefined;
  delivered: () => void;
  failed: (error: unknown) => void;
}

interface Subscription {
  readonly entries: Set<ListenerEntry>;
  list: ProviderRecord[] | undefined;
  json: string | undefined;
}

export function createRegistryShell(
  kind: string,
  address: RegistryAddress,
  options: RegistryOptions,
  createDriver: (context: RegistryContext) => RegistryDriver,
): Registry {
  const registered = new Map<string, string>();
  const subscriptions = new Map<string, Subscription>();
  const statusListeners = new Set<(status: RegistryStatus) => void>();
  let status: RegistryStatus = 'disconnected';
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
    deliver(segment, records) {
      const sub = subscriptions.get(segment);
      if (!sub || closing) return;
      const list = normalizeProviders(records);
      sub.list = list;
      sub.json = JSON.stringify(list);
      for (const entry of [...sub.entries]) deliverTo(entry, sub);
    },
    setStatus(next, reason) {
      if (next === status || closing) return;
      status = next;
      if (next === 'connected') log('info', 'connected');
      else log('warn', `disconnected${reason ? `: ${reason}` : ''}; keeping the last known lists`);
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
    kind,
    get status() {
      return status;
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
          sub = { entries: new Set(), list: undefined, json: undefined };
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
