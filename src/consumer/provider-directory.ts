/**
 * The live provider list of one service, as endpoints. Endpoint objects are kept across updates (by
 * address) so their counters survive membership changes. Every call reads `list()`: no registry round
 * trip per call. When the list is empty, `whyEmpty()` says why (for NoProvider errors): built only when
 * an error is built, never per call.
 */
import type { ProviderRecord } from '../registry/provider-record.js';
import { transportAddress } from '../transport/transport.js';
import { ProviderEndpoint } from './provider-endpoint.js';

/** Why a directory has no provider: one readable sentence and the same as data. */
export interface EmptyReason {
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export type DirectoryListener = (
  added: ProviderEndpoint[],
  removed: ProviderEndpoint[],
  /** Kept endpoints whose record now comes from a new provider process (another pid or start time). */
  renewed: ProviderEndpoint[],
) => void;

export interface ProviderDirectory {
  /** Current endpoints (the same array until the membership changes). */
  list(): readonly ProviderEndpoint[];
  /** Called after every membership change with the added, removed and renewed endpoints. */
  onChange(listener: DirectoryListener): () => void;
  /** Replaces the list from provider records. */
  update(records: readonly ProviderRecord[]): void;
  /** Why there is no provider, when the source can tell (registries asked, their state and contents). */
  whyEmpty(): EmptyReason | undefined;
  close(): void;
}

/** Whether `next` was written by another provider process than `previous` at the same address. */
function isNewIncarnation(previous: ProviderRecord | undefined, next: ProviderRecord): boolean {
  return previous !== undefined && (previous.pid !== next.pid || previous.startTime !== next.startTime);
}

export function createProviderDirectory(
  initial: readonly ProviderRecord[] = [],
  whyEmpty: () => EmptyReason | undefined = () => undefined,
): ProviderDirectory {
  let endpoints: readonly ProviderEndpoint[] = [];
  const listeners = new Set<DirectoryListener>();

  const update = (records: readonly ProviderRecord[]): void => {
    const previous = new Map(endpoints.map((endpoint) => [endpoint.address, endpoint]));
    const next: ProviderEndpoint[] = [];
    const added: ProviderEndpoint[] = [];
    const renewed: ProviderEndpoint[] = [];
    const seen = new Set<string>();
    for (const record of records) {
      const address = transportAddress(record.host, record.port, record.transport);
      if (seen.has(address)) continue;
      seen.add(address);
      const existing = previous.get(address);
      if (existing) {
        if (isNewIncarnation(existing.record, record)) renewed.push(existing);
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
    for (const listener of listeners) listener(added, removed, renewed);
  };

  update(initial);
  return {
    list: () => endpoints,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    update,
    whyEmpty,
    close() {
      listeners.clear();
    },
  };
}
