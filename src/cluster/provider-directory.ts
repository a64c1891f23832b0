/**
 * The live provider list of one service, as endpoints. Endpoint objects are kept across updates (by
 * address) so their counters survive membership changes. Every call reads `list()`: no registry round
 * trip per call.
 */
import type { ProviderRecord } from '../registry/provider-record.js';
import { ProviderEndpoint } from './provider-endpoint.js';

export interface ProviderDirectory {
  /** Current endpoints (the same array until the membership changes). */
  list(): readonly ProviderEndpoint[];
  /** Called after every membership change with the added and removed endpoints. */
  onChange(listener: (added: ProviderEndpoint[], removed: ProviderEndpoint[]) => void): () => void;
  /** Replaces the list from provider records. */
  update(records: readonly ProviderRecord[]): void;
  close(): void;
}

export function createProviderDirectory(initial: readonly ProviderRecord[] = []): ProviderDirectory {
  let endpoints: readonly ProviderEndpoint[] = [];
  const listeners = new Set<(added: ProviderEndpoint[], removed: ProviderEndpoint[]) => void>();

  const update = (records: readonly ProviderRecord[]): void => {
    const previous = new Map(endpoints.map((endpoint) => [endpoint.address, endpoint]));
    const next: ProviderEndpoint[] = [];
    const added: ProviderEndpoint[] = [];
    const seen = new Set<string>();
    for (const record of records) {
      const address = `${record.host}:${record.port}`;
      if (seen.has(address)) continue;
      seen.add(address);
      const existing = previous.get(address);
      if (existing) {
        existing.weight = record.weight;
        existing.startTime = record.startTime;
        existing.record = record;
        next.push(existing);
        previous.delete(address);
      } else {
        const endpoint = ProviderEndpoint.fromRecord(record);
        next.push(endpoint);
        added.push(endpoint);
      }
    }
    endpoints = next;
    const removed = [...previous.values()];
    for (const listener of listeners) listener(added, removed);
  };

  update(initial);
  return {
    list: () => endpoints,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    update,
    close() {
      listeners.clear();
    },
  };
}
