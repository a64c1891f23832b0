/**
 * The registry contract. Every implementation (file, etcd, ZooKeeper, Redis, direct, user kinds) obeys
 * the same behaviour, checked by one conformance suite (test/registry/conformance.ts):
 *
 * - `register(record)` announces a provider under
 *   `/callisto/<service>:<version>/providers/<host>:<port>` (see docs/registry.md). It resolves once the
 *   record is visible to other processes. Registering the same address again replaces the record. The
 *   registration lives as long as this registry instance: when the process dies without unregistering,
 *   the entry disappears within the implementation's TTL (lease, session, key expiry, stale file).
 * - `unregister(record)` removes it at once; subscribers see the removal without waiting for a TTL.
 * - `registerConsumer` / `unregisterConsumer` do the same under `.../consumers/<host>:<pid>:<instance>`.
 * - `subscribe(key, listener)` calls `listener` with the full current provider list of that service,
 *   first as soon as it is known and again on every change (never with a diff). Listeners are not
 *   called with an identical list twice in a row. The returned function unsubscribes.
 * - While the backing server is unreachable, the implementation keeps its last known lists (it does not
 *   call listeners with an empty list because of the outage), reconnects with bounded exponential
 *   backoff, and once reconnected re-registers everything this instance registered and re-reads every
 *   subscribed service, calling listeners if the list differs. Each transition is reported once through
 *   `onStatus` and logged once, not per retry.
 * - A server that cannot be reached from the start is logged at the first failed attempt (once, not per
 *   retry), and `lastError` says why until it is reached.
 * - Stored provider records are checked where they are read (record-validation.ts): an invalid or
 *   unreadable entry is skipped with one log line naming the registry and the key or file, and never
 *   stops the rest of the list from updating.
 * - `close()` unregisters everything this instance registered, stops watches and timers, and closes
 *   connections. It is idempotent. Nothing (socket, timer, watcher) stays open after it resolves.
 * - Optional, for operators' tools (`callisto ls`, `callisto doctor`), never on the call path:
 *   `services()` lists every service key that has at least one live provider or consumer entry, with
 *   the number of each; `consumers(key)` reads the consumer records of one key, checked where read (an
 *   invalid entry is skipped and logged once, like a provider entry). Both are bounded (an engine stops
 *   listing after about 10,000 keys) and reject when the server cannot be asked.
 */
import type { ServiceKey } from '../core/service-key.js';
import type { ServiceOverrides } from './override-record.js';
import type { ConsumerRecord, ProviderRecord } from './provider-record.js';

export type ProviderListener = (providers: ProviderRecord[]) => void;

/** Connectivity of a registry to its backing server. */
export type RegistryStatus = 'connected' | 'disconnected';

export interface Registry {
  /** The address kind, e.g. `etcd`. */
  readonly kind: string;
  register(record: ProviderRecord): Promise<void>;
  unregister(record: ProviderRecord): Promise<void>;
  registerConsumer(record: ConsumerRecord): Promise<void>;
  unregisterConsumer(record: ConsumerRecord): Promise<void>;
  /** Starts following a service; resolves after the first list has been delivered (possibly empty). */
  subscribe(key: ServiceKey, listener: ProviderListener): Promise<() => void>;
  /** Current connectivity. */
  readonly status: RegistryStatus;
  /** Called on every connectivity transition. */
  onStatus(listener: (status: RegistryStatus) => void): () => void;
  close(): Promise<void>;
  /**
   * Why the server cannot be reached (the last failure), while disconnected; undefined before a first
   * failure (still connecting). Optional.
   */
  readonly lastError?: string | undefined;
  /**
   * Where this registry keeps its entries, for messages: `file://` with the resolved absolute directory,
   * else the address. Optional (the address is used).
   */
  readonly location?: string;
  /**
   * What the registry holds under a service name: every version and group registered, with the number
   * of provider entries of each. For diagnostics (NoProvider messages), never on the call path; rejects
   * when the server cannot be asked. Optional.
   */
  inventory?(serviceName: string): Promise<ServiceHolding[]>;
  /**
   * Every service key with at least one live provider or consumer entry (expired or stale entries are
   * not counted; a key whose entries are all gone is not listed, even where the engine keeps its empty
   * parent nodes), with the number of entries of each kind, valid or not. Sorted by name, version,
   * group. For operators' tools, never on the call path; bounded like `inventory`; rejects when the
   * server cannot be asked. Optional.
   */
  services?(): Promise<ServiceListing[]>;
  /**
   * The consumer records of one service key, sorted by host and pid. Each entry is checked where it is
   * read: an invalid one is skipped and logged once (naming the registry and the key or file). For
   * operators' tools; rejects when the server cannot be asked. Optional.
   */
  consumers?(key: ServiceKey): Promise<ConsumerRecord[]>;
  /**
   * Runtime control (docs/governance.md): the override record of a service key, checked where read (a
   * malformed record or entry is skipped and logged once). Persistent: it outlives every process.
   * Optional; every built-in server-backed kind and `file` have it.
   */
  readOverrides?(key: ServiceKey): Promise<ServiceOverrides>;
  /**
   * Changes the override record of a service key atomically, whoever else writes it at the same time
   * (another process, another registry instance): reads the record and its version, calls `change`
   * with a fresh copy of the overrides, and writes what it returns only if the record is still at that
   * version (compare-and-set on the server: etcd a transaction on the key's mod revision, ZooKeeper
   * `setData`/`create`/`remove` with the node version, Redis a Lua script comparing a digest, file an
   * exclusive lock file). On a conflict it reads again and calls `change` again (so `change` must only
   * compute: no side effects), up to `attempts` times (default OVERRIDE_UPDATE_ATTEMPTS) with jittered
   * backoff, then rejects with an `OverrideConflictError`; nothing is ever dropped without a rejection.
   * Overrides that change nothing delete the record; a change that returns what was read writes nothing.
   * Resolves with the overrides written. Rejects when the record is malformed (an operator must look at
   * it) or the server cannot be asked. Optional; offered wherever `readOverrides` is.
   */
  updateOverrides?(
    key: ServiceKey,
    change: OverrideChange,
    options?: OverrideUpdateOptions,
  ): Promise<ServiceOverrides>;
  /**
   * Replaces the override record of a service key, whatever it holds (overrides that change nothing
   * delete it): `updateOverrides` with a change that ignores the current record. Use `updateOverrides`
   * to change one field without losing another writer's change.
   */
  writeOverrides?(key: ServiceKey, overrides: ServiceOverrides): Promise<void>;
  /**
   * Follows the override record of a service key: `listener` gets the checked overrides once read and
   * again on every change (read every `overridePollMs`). Resolves after the first read, or its failure
   * (then the listener is called once the server answers). The returned function stops following.
   */
  watchOverrides?(key: ServiceKey, listener: OverrideListener): Promise<() => void>;
}

export type OverrideListener = (overrides: ServiceOverrides) => void;

/**
 * What `updateOverrides` applies: the current overrides (a fresh copy, which it may change) to the
 * overrides to store. Called once per attempt, so it must only compute. Throwing rejects the update.
 */
export type OverrideChange = (current: ServiceOverrides) => ServiceOverrides | Promise<ServiceOverrides>;

/** Options of one `updateOverrides`. */
export interface OverrideUpdateOptions {
  /** Compare-and-set attempts before rejecting with an OverrideConflictError. Default 10. */
  readonly attempts?: number;
}

/** One service key a registry holds live entries for, as `services()` lists it. */
export interface ServiceListing {
  readonly name: string;
  readonly version: string;
  readonly group: string;
  /** Live provider entries (valid or not). */
  readonly providers: number;
  /** Live consumer entries (valid or not). */
  readonly consumers: number;
}

/** One service key a registry holds entries for. */
export interface ServiceHolding {
  readonly version: string;
  readonly group: string;
  /** Provider entries stored under it (valid or not). */
  readonly providers: number;
}

/** Options every registry implementation accepts. */
export interface RegistryOptions {
  /** How long a dead process's entries may survive (lease TTL, key expiry, stale file age). Default 10000. */
  ttlMs: number;
  /** Root path of the layout. Default `/callisto`. */
  root: string;
  /** Upper bound of the reconnect backoff. Default 5000. */
  maxBackoffMs: number;
  /** How often a followed override record is read (runtime control, docs/governance.md). Default 500. */
  overridePollMs: number;
  /** Logs transitions; default writes nothing. */
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export const DEFAULT_REGISTRY_OPTIONS: RegistryOptions = {
  ttlMs: 10_000,
  root: '/callisto',
  maxBackoffMs: 5_000,
  overridePollMs: 500,
  log: () => {},
};

/** A parsed registry address: `etcd://h1:2379,h2:2379` -> kind `etcd`, hosts, and the rest. */
export interface RegistryAddress {
  readonly kind: string;
  /** `host:port` entries, or for `file://` the directory. */
  readonly hosts: string[];
  /** Query parameters (`?ttl=5000`). */
  readonly params: Record<string, string>;
  /** The original string. */
  readonly raw: string;
}

/** Builds a registry for an address; registered as extension kind `registry` under the address kind. */
export type RegistryFactory = (
  address: RegistryAddress,
  options: RegistryOptions,
) => Registry | Promise<Registry>;

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    registry: RegistryFactory;
  }
}
