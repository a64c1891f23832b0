/**
 * The registry part of a service's directory (directory.ts): follows one service across all the
 * registries it is asked of, merges their lists, keeps a snapshot file of each registry's last known
 * list (registry-snapshots.ts) for when that registry is away at start, and protects against a sudden
 * drop to zero providers while the connections to them are still healthy (a registry glitch should not
 * take a working service down). A registry that has not delivered a first list after `noticeMs` is
 * named in a log line at once, not only when the snapshot is used.
 */
import type { ServiceKey } from '../core/service-key.js';
import { type ProviderRecord, servicePathSegment } from '../registry/provider-record.js';
import type { Registry } from '../registry/registry.js';
import { describeRegistry } from '../registry/registry-description.js';
import { normalizeProviders } from '../registry/registry-paths.js';
import { DEFAULT_START_TIMEOUT_MS } from '../registry/registry-set.js';
import { describeError } from '../registry/timing.js';
import { DEFAULT_CONSUMER_CONFIG } from './consumer-options.js';
import { createSnapshotStore } from './registry-snapshots.js';

export interface RegistryListsOptions {
  /** The service to follow. */
  key: ServiceKey;
  /** Registries to subscribe on; on the same `host:port`, an earlier registry's record wins. */
  registries: Registry[];
  /**
   * One snapshot file for the merged list of all the registries (e.g. `<dir>/<seg>.json`), used only
   * when no registry answers at start. Default: none.
   */
  snapshotPath?: string;
  /**
   * A snapshot file per registry (same positions as `registries`; `registrySnapshotPaths()`): each
   * registry's own last list, standing in for that registry alone when it has not answered at start.
   * Default: none.
   */
  registrySnapshotPaths?: ReadonlyArray<string | undefined>;
  /** A merged snapshot of an earlier version, read (never written) when nothing else stands in. */
  legacySnapshotPath?: string;
  /** Hold a sudden change to zero providers until confirmed. Default: `consumer.emptyProtection`'s. */
  emptyProtection?: boolean;
  /** How long an unconfirmed empty list is held before re-checking the connections. Default 5000. */
  emptyConfirmDelayMs?: number;
  /** How long to wait at start for any registry's list before falling back to the snapshot. Default: `startTimeoutMs`'s. */
  startTimeoutMs?: number;
  /** After this long without a first list from a registry, say so in the log (once). Default 1000. */
  noticeMs?: number;
  /**
   * Whether the consumer still has healthy connections to some of these providers: open, and not told
   * "going away". Default: never. Call `recheck()` when that may have changed.
   */
  hasHealthyConnections?: (records: ProviderRecord[]) => boolean;
  /** Called with the merged list on every applied change. */
  onChange: (providers: ProviderRecord[]) => void;
  /** Logs decisions (snapshot used, empty list held). Default: nothing. */
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export const DEFAULT_REGISTRY_LISTS_OPTIONS = {
  emptyProtection: DEFAULT_CONSUMER_CONFIG.emptyProtection,
  emptyConfirmDelayMs: 5_000,
  startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  noticeMs: 1_000,
  hasHealthyConnections: (_records: ProviderRecord[]): boolean => false,
  log: (_level: 'info' | 'warn' | 'error', _message: string): void => {},
} as const;

export interface RegistryLists {
  /** The list currently applied. */
  readonly providers: ProviderRecord[];
  /** Where the applied list came from. */
  readonly source: 'none' | 'registry' | 'snapshot';
  /** Resolves once a first list is applied: from a registry, or the snapshot after `startTimeoutMs`. */
  readonly ready: Promise<void>;
  /**
   * Re-evaluates a held empty list now (the consumer's connections changed, e.g. a provider said it is
   * going away): applied at once when no connection to the held providers is healthy any more.
   */
  recheck(): void;
  /** Unsubscribes everywhere, stops timers, waits for the last snapshot write. Idempotent. */
  close(): Promise<void>;
}

export function followRegistryLists(options: RegistryListsOptions): RegistryLists {
  const o = { ...DEFAULT_REGISTRY_LISTS_OPTIONS, ...stripUndefined(options) };
  const segment = servicePathSegment(o.key);
  const lists: Array<ProviderRecord[] | undefined> = o.registries.map(() => undefined);
  /** A silent registry's list from its own snapshot file, until it answers. */
  const restored: Array<ProviderRecord[] | undefined> = o.registries.map(() => undefined);
  /** What was last written to each registry's file (JSON), so an unchanged list is not rewritten. */
  const saved: Array<string | undefined> = o.registries.map(() => undefined);
  const snapshots = createSnapshotStore(segment, o.log);
  const registryPaths = o.registrySnapshotPaths ?? [];
  const unsubscribes: Array<() => void> = [];
  let applied: ProviderRecord[] = [];
  let appliedJson = '[]';
  let source: RegistryLists['source'] = 'none';
  let heldSince: number | undefined;
  let heldWarned = false;
  let confirmTimer: NodeJS.Timeout | undefined;
  let startTimer: NodeJS.Timeout | undefined;
  let noticeTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });

  const merged = (): ProviderRecord[] =>
    normalizeProviders(lists.flatMap((list, index) => list ?? restored[index] ?? []));
  const allAnswered = (): boolean => lists.every((list) => list !== undefined);

  const apply = (list: ProviderRecord[], from: 'registry' | 'snapshot'): void => {
    clearTimeout(confirmTimer);
    confirmTimer = undefined;
    heldSince = undefined;
    heldWarned = false;
    const json = JSON.stringify(list);
    const changed = json !== appliedJson || source === 'none';
    applied = list;
    appliedJson = json;
    source = from;
    if (allAnswered()) clearTimeout(startTimer);
    markReady();
    if (from === 'registry') saveRegistrySnapshots();
    if (!changed) return;
    try {
      o.onChange(list.slice());
    } catch (error) {
      o.log('error', `${segment}: onChange threw: ${describeError(error)}`);
    }
    if (from === 'registry' && o.snapshotPath) saveSnapshot(list);
  };

  const saveSnapshot = (list: ProviderRecord[]): void => {
    if (o.snapshotPath) snapshots.save(o.snapshotPath, list);
  };

  /** Writes each answered registry's own list to its file, when it changed since the last write. */
  const saveRegistrySnapshots = (): void => {
    lists.forEach((list, index) => {
      const path = registryPaths[index];
      if (list === undefined || !path) return;
      const json = JSON.stringify(list);
      if (saved[index] === json) return;
      saved[index] = json;
      snapshots.save(path, list);
    });
  };

  const scheduleConfirm = (): void => {
    clearTimeout(confirmTimer);
    confirmTimer = setTimeout(() => {
      confirmTimer = undefined;
      if (closed || heldSince === undefined) return;
      const list = merged();
      if (list.length > 0) return apply(list, 'registry');
      if (o.hasHealthyConnections(applied)) {
        if (!heldWarned) {
          heldWarned = true;
          o.log(
            'warn',
            `${segment}: registries report zero providers for ${Date.now() - (heldSince ?? Date.now())} ms ` +
              'while connections to them are healthy; keeping the last list until they fail or a provider returns',
          );
        }
        return scheduleConfirm();
      }
      o.log(heldWarned ? 'warn' : 'info', `${segment}: zero providers confirmed`);
      apply(list, 'registry');
    }, o.emptyConfirmDelayMs);
  };

  const onList = (): void => {
    if (closed) return;
    const list = merged();
    const suddenEmpty = list.length === 0 && applied.length > 0;
    if (suddenEmpty && o.emptyProtection && o.hasHealthyConnections(applied)) {
      if (heldSince === undefined) {
        // Held without a word: a provider that unregisters cleanly says "going away" on its connection
        // right after, and `recheck()` then applies the list at once. Only a hold that outlasts
        // emptyConfirmDelayMs with healthy connections is worth a warning.
        heldSince = Date.now();
        scheduleConfirm();
        return;
      }
      // a second empty notification confirms it
      o.log('info', `${segment}: zero providers confirmed by a second notification`);
    }
    apply(list, 'registry');
  };

  const recheck = (): void => {
    if (closed || heldSince === undefined || o.hasHealthyConnections(applied)) return;
    const list = merged();
    if (list.length === 0 && heldWarned) o.log('info', `${segment}: zero providers confirmed`);
    apply(list, 'registry');
  };

  /** Names the registries that have not delivered a first list yet, with their state. */
  const silentRegistries = (): string =>
    o.registries
      .filter((_, index) => lists[index] === undefined)
      .map(describeRegistry)
      .join('; ');

  /** At the start timeout: each registry still silent is stood in for by its own snapshot file. */
  const useRegistrySnapshots = async (): Promise<boolean> => {
    const silent = o.registries.flatMap((registry, index) =>
      lists[index] === undefined && registryPaths[index] ? [{ registry, index }] : [],
    );
    const loaded = await Promise.all(silent.map(({ index }) => snapshots.load(registryPaths[index]!)));
    if (closed) return false;
    let used = false;
    silent.forEach(({ registry, index }, k) => {
      const list = loaded[k];
      if (list === undefined || lists[index] !== undefined) return;
      restored[index] = list;
      used = true;
      o.log(
        'warn',
        `${segment}: ${describeRegistry(registry)} did not answer in ${o.startTimeoutMs} ms; using its ` +
          `snapshot (${list.length} providers) until it does`,
      );
    });
    if (!used) return false;
    apply(merged(), source === 'registry' || lists.some((l) => l !== undefined) ? 'registry' : 'snapshot');
    return true;
  };

  const useSnapshot = async (): Promise<void> => {
    if (closed) return;
    if ((await useRegistrySnapshots()) || closed || source !== 'none') return;
    const path = o.snapshotPath ?? o.legacySnapshotPath;
    const list = path ? await snapshots.load(path) : undefined;
    if (closed || source !== 'none') return;
    if (list) {
      o.log(
        'warn',
        `${segment}: no registry answered in ${o.startTimeoutMs} ms (${silentRegistries()}); ` +
          `using the snapshot (${list.length} providers); following the registries once they answer`,
      );
      apply(list, 'snapshot');
    } else {
      if (o.registries.length > 0) {
        o.log(
          'warn',
          `${segment}: no registry answered in ${o.startTimeoutMs} ms (${silentRegistries()}) and there is ` +
            'no snapshot; calls fail with NoProvider until one answers',
        );
      }
      markReady();
    }
  };

  const notice = (): void => {
    noticeTimer = undefined;
    if (closed) return;
    const silent = silentRegistries();
    if (silent)
      o.log('warn', `${segment}: no provider list after ${o.noticeMs} ms from ${silent}; still trying`);
  };

  o.registries.forEach((registry, index) => {
    registry
      .subscribe(o.key, (list) => {
        lists[index] = list;
        if (noticeTimer !== undefined && lists.every((l) => l !== undefined)) {
          clearTimeout(noticeTimer);
          noticeTimer = undefined;
        }
        onList();
      })
      .then(
        (unsubscribe) => {
          if (closed) unsubscribe();
          else unsubscribes.push(unsubscribe);
        },
        (error: unknown) =>
          o.log('warn', `${segment}: subscribe on ${registry.kind} failed: ${describeError(error)}`),
      );
  });
  if (o.registries.length === 0) void useSnapshot();
  else {
    startTimer = setTimeout(() => void useSnapshot(), o.startTimeoutMs);
    if (o.noticeMs < o.startTimeoutMs) noticeTimer = setTimeout(notice, o.noticeMs);
  }

  return {
    get providers() {
      return applied.slice();
    },
    get source() {
      return source;
    },
    ready,
    recheck,
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(confirmTimer);
      clearTimeout(startTimer);
      clearTimeout(noticeTimer);
      for (const unsubscribe of unsubscribes.splice(0)) unsubscribe();
      markReady();
      await snapshots.flushed();
    },
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
