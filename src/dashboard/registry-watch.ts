/**
 * What the registries hold, kept current for the page: every registry's service keys (`services()`,
 * read every `refreshMs`), each key's providers (a subscription per key and registry: pushed on every
 * change), and on request a key's consumers (`consumers(key)`). A registry that cannot be reached keeps
 * its last lists and says why; the others go on.
 */
import type { ServiceKey } from '../index.js';
import type { ConsumerRecord, ProviderRecord, Registry, ServiceListing } from '../registry/index.js';

/** Keys followed per registry at most: a registry holding more shows the first ones, and says so. */
export const MAX_KEYS_PER_REGISTRY = 2_000;
/** How long a read of the lists waits for a new key's first provider list, ms. */
const FIRST_LIST_MS = 5_000;

export interface WatchedRegistry {
  readonly address: string;
  readonly registry: Registry;
}

export interface RegistryState {
  readonly address: string;
  readonly location: string;
  readonly kind: string;
  readonly status: 'connected' | 'disconnected';
  /** Why it cannot be read, while it cannot. */
  readonly error?: string;
  /** The registry holds more keys than are followed. */
  readonly truncated?: boolean;
}

export interface KeyProviders {
  /** The registry's address. */
  readonly registry: string;
  readonly providers: readonly ProviderRecord[];
}

export interface WatchedKey {
  readonly key: ServiceKey;
  /** The registries listing this key, with their provider lists (undefined until the first one came). */
  readonly lists: ReadonlyArray<{ registry: string; listing: ServiceListing; providers?: ProviderRecord[] }>;
}

export interface RegistryWatch {
  /** Resolves after every registry has been read once (or failed to be). */
  readonly ready: Promise<void>;
  registries(): RegistryState[];
  keys(): WatchedKey[];
  /** The consumers of a key in every registry listing it, and why a registry could not say. */
  consumers(key: ServiceKey): Promise<{
    records: Array<ConsumerRecord & { registry: string }>;
    errors: string[];
  }>;
  /** Reads the service lists now (the next periodic read still comes). */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export const keyId = (key: { name: string; version: string; group: string }) =>
  `${key.name}\u0000${key.version}\u0000${key.group}`;

interface Followed {
  listing: ServiceListing;
  providers?: ProviderRecord[];
  unsubscribe?: () => void;
  dropped: boolean;
}

interface PerRegistry {
  readonly watched: WatchedRegistry;
  readonly keys: Map<string, Followed>;
  error?: string;
  truncated: boolean;
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createRegistryWatch(watched: readonly WatchedRegistry[], refreshMs: number): RegistryWatch {
  const states: PerRegistry[] = watched.map((w) => ({ watched: w, keys: new Map(), truncated: false }));
  let closed = false;
  let running: Promise<void> | undefined;

  /** Resolves once the first list came (or the subscription failed), or after `FIRST_LIST_MS`. */
  const follow = (state: PerRegistry, id: string, followed: Followed): Promise<void> => {
    const { listing } = followed;
    const key: ServiceKey = { name: listing.name, version: listing.version, group: listing.group };
    const subscribed = state.watched.registry
      .subscribe(key, (providers) => {
        followed.providers = providers;
      })
      .then((unsubscribe) => {
        if (followed.dropped || closed) unsubscribe();
        else followed.unsubscribe = unsubscribe;
      })
      .catch((error: unknown) => {
        // tried again at the next read of the list
        state.keys.delete(id);
        state.error = `cannot follow ${listing.name}: ${describe(error)}`;
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FIRST_LIST_MS);
    });
    return Promise.race([subscribed, late]).finally(() => clearTimeout(timer));
  };

  const readOne = async (state: PerRegistry) => {
    const { registry } = state.watched;
    if (registry.services === undefined) {
      state.error = `the ${registry.kind} registry cannot list its services`;
      return;
    }
    let listings: ServiceListing[];
    try {
      listings = await registry.services();
    } catch (error) {
      state.error = registry.lastError ?? describe(error);
      return;
    }
    if (closed) return;
    state.error = undefined;
    state.truncated = listings.length > MAX_KEYS_PER_REGISTRY;
    const seen = new Set<string>();
    const firstLists: Promise<void>[] = [];
    for (const listing of listings.slice(0, MAX_KEYS_PER_REGISTRY)) {
      const id = keyId(listing);
      seen.add(id);
      const known = state.keys.get(id);
      if (known) {
        known.listing = listing;
        continue;
      }
      const followed: Followed = { listing, dropped: false };
      state.keys.set(id, followed);
      firstLists.push(follow(state, id, followed));
    }
    for (const [id, followed] of state.keys) {
      if (seen.has(id)) continue;
      followed.dropped = true;
      followed.unsubscribe?.();
      state.keys.delete(id);
    }
    await Promise.all(firstLists);
  };

  const readAll = (): Promise<void> => {
    running ??= Promise.all(states.map(readOne)).then(() => {
      running = undefined;
    });
    return running;
  };

  const ready = readAll();
  const timer = setInterval(() => void readAll(), refreshMs);
  timer.unref();

  return {
    ready,
    registries() {
      return states.map((state) => {
        const { registry, address } = state.watched;
        const error = registry.status === 'connected' ? state.error : (registry.lastError ?? state.error);
        return {
          address,
          location: registry.location ?? address,
          kind: registry.kind,
          status: registry.status,
          ...(error === undefined ? {} : { error }),
          ...(state.truncated ? { truncated: true } : {}),
        };
      });
    },
    keys() {
      const byId = new Map<string, { key: ServiceKey; lists: WatchedKey['lists'][number][] }>();
      for (const state of states) {
        for (const [id, followed] of state.keys) {
          const { listing } = followed;
          let entry = byId.get(id);
          if (!entry) {
            entry = {
              key: { name: listing.name, version: listing.version, group: listing.group },
              lists: [],
            };
            byId.set(id, entry);
          }
          entry.lists.push({
            registry: state.watched.address,
            listing,
            ...(followed.providers === undefined ? {} : { providers: followed.providers }),
          });
        }
      }
      return [...byId.values()].sort(
        (a, b) =>
          a.key.name.localeCompare(b.key.name) ||
          a.key.version.localeCompare(b.key.version) ||
          a.key.group.localeCompare(b.key.group),
      );
    },
    async consumers(key) {
      const id = keyId(key);
      const errors: string[] = [];
      const lists = await Promise.all(
        states
          .filter((state) => state.keys.has(id) && state.watched.registry.consumers !== undefined)
          .map(async (state) => {
            const { address } = state.watched;
            try {
              const records = await state.watched.registry.consumers!(key);
              return records.map((record) => ({ ...record, registry: address }));
            } catch (error) {
              errors.push(`cannot read the consumers from ${address}: ${describe(error)}`);
              return [];
            }
          }),
      );
      return { records: lists.flat(), errors };
    },
    refresh: readAll,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await running;
      for (const state of states) {
        for (const followed of state.keys.values()) {
          followed.dropped = true;
          followed.unsubscribe?.();
        }
        state.keys.clear();
      }
    },
  };
}
