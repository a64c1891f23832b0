/**
 * The test kit's registry: provider lists kept in memory, shared by the apps of one kit (registry kind
 * `kit`, address `kit://kit:1`). It keeps the registry contract (registry/registry.ts): full lists to
 * subscribers, first as soon as they subscribe and again on every change (on a later turn, as a real
 * registry's notifications arrive), never the same list twice in a row; `close()` unregisters what the
 * client registered. A provider that crashes (`TestProvider.down()`) can stay listed, as with a real
 * registry until its entry expires.
 */
import type { ServiceKey } from '../core/service-key.js';
import { type ProviderRecord, providerAddress, servicePathSegment } from '../registry/provider-record.js';
import type { ProviderListener, Registry, RegistryFactory, ServiceHolding } from '../registry/registry.js';

interface Watch {
  readonly listener: ProviderListener;
  /** The list last delivered (as JSON), so an unchanged list is not delivered again. */
  last: string | undefined;
}

/** The lists of one kit. */
export interface KitStore {
  /** Puts a record, as a provider that registered (or one that crashed and is still listed). */
  put(record: ProviderRecord): void;
  /** Removes the record at `record`'s address. */
  remove(record: ProviderRecord): void;
  /** The records of a service now. */
  list(key: ServiceKey): ProviderRecord[];
  /**
   * The app `application` crashed: what it registered stays listed when its registry client closes (a
   * real registry keeps a crashed provider's entry until its TTL). Undone by `revive`.
   */
  crash(application: string): void;
  revive(application: string): void;
  /** Makes a registry client of this store (the `kit` registry kind of the kit's apps). */
  readonly factory: RegistryFactory;
}

export function createKitStore(): KitStore {
  const services = new Map<string, Map<string, ProviderRecord>>();
  const watches = new Map<string, Set<Watch>>();
  const crashed = new Set<string>();

  const segmentOf = (record: Pick<ProviderRecord, 'service' | 'version' | 'group'>): string =>
    servicePathSegment({ name: record.service, version: record.version, group: record.group });

  const recordsOf = (segment: string): ProviderRecord[] => [...(services.get(segment)?.values() ?? [])];

  const deliver = (watch: Watch, segment: string): void => {
    const list = recordsOf(segment);
    const json = JSON.stringify(list);
    if (json === watch.last) return;
    watch.last = json;
    watch.listener(list);
  };

  /** Tells the watchers of `segment`, on a later turn (a real registry's notification is never synchronous). */
  const changed = (segment: string): void => {
    setImmediate(() => {
      for (const watch of watches.get(segment) ?? []) deliver(watch, segment);
    });
  };

  const store: KitStore = {
    put(record) {
      const segment = segmentOf(record);
      let byAddress = services.get(segment);
      if (byAddress === undefined) {
        byAddress = new Map();
        services.set(segment, byAddress);
      }
      byAddress.set(providerAddress(record), record);
      changed(segment);
    },
    remove(record) {
      const segment = segmentOf(record);
      if (services.get(segment)?.delete(providerAddress(record))) changed(segment);
    },
    list(key) {
      return recordsOf(servicePathSegment(key));
    },
    crash(application) {
      crashed.add(application);
    },
    revive(application) {
      crashed.delete(application);
    },
    factory: () => {
      const registered = new Map<string, ProviderRecord>();
      const mine = new Set<Watch>();
      let closed = false;
      const registry: Registry = {
        kind: 'kit',
        status: 'connected',
        location: 'kit://kit:1 (the test kit, in memory)',
        async register(record) {
          registered.set(`${segmentOf(record)}/${providerAddress(record)}`, record);
          store.put(record);
        },
        async unregister(record) {
          registered.delete(`${segmentOf(record)}/${providerAddress(record)}`);
          store.remove(record);
        },
        async registerConsumer() {},
        async unregisterConsumer() {},
        async subscribe(key, listener) {
          const segment = servicePathSegment(key);
          const watch: Watch = { listener, last: undefined };
          let set = watches.get(segment);
          if (set === undefined) {
            set = new Set();
            watches.set(segment, set);
          }
          set.add(watch);
          mine.add(watch);
          deliver(watch, segment);
          return () => {
            set.delete(watch);
            mine.delete(watch);
          };
        },
        onStatus: () => () => {},
        async inventory(serviceName): Promise<ServiceHolding[]> {
          const holdings: ServiceHolding[] = [];
          for (const byAddress of services.values()) {
            const first = byAddress.values().next().value as ProviderRecord | undefined;
            if (first?.service === serviceName) {
              holdings.push({ version: first.version, group: first.group, providers: byAddress.size });
            }
          }
          return holdings;
        },
        async close() {
          if (closed) return;
          closed = true;
          for (const record of registered.values())
            if (!crashed.has(record.application)) store.remove(record);
          registered.clear();
          for (const watch of mine) {
            for (const set of watches.values()) set.delete(watch);
          }
          mine.clear();
        },
      };
      return registry;
    },
  };
  return store;
}
