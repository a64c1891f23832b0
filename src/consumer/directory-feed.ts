/**
 * Where a directory's provider records come from: fixed addresses (`url`), the app itself (in-process),
 * or registries followed through registry-lists.ts (merged, snapshot, empty-list protection), with the
 * consumer announced in them and an explanation of an empty list (the registries asked, their state and
 * what they hold under the service's name) for NoProvider.
 */
import os from 'node:os';
import type { ServiceKey } from '../core/service-key.js';
import type { Logger } from '../observability/logger.js';
import { directProviderRecord } from '../registry/direct-registry.js';
import { createAbsenceExplainer } from '../registry/explain-absence.js';
import type { ServiceOverrides } from '../registry/override-record.js';
import { type ConsumerRecord, type ProviderRecord, servicePathSegment } from '../registry/provider-record.js';
import type { Registry } from '../registry/registry.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { describeError } from '../registry/timing.js';
import type { DirectoryFeed } from './directory.js';
import { IN_PROCESS } from './endpoint.js';
import { followOverrides, type OverrideFeed } from './override-feed.js';
import { followRegistryLists, type RegistryLists } from './registry-lists.js';
import { registrySnapshotPaths } from './registry-snapshots.js';

/**
 * Parses `host:port`, `callisto://host:port` (both over TCP) or `<transport>://host:port` (e.g.
 * `memory://127.0.0.1:3`).
 */
export function parseDirectAddress(raw: string): { host: string; port: number; transport: string } {
  let text = raw.trim().replace(/\/$/, '');
  let transport = 'tcp';
  const scheme = /^([a-z][a-z0-9-]*):\/\//.exec(text);
  if (scheme) {
    if (scheme[1] !== 'callisto') transport = scheme[1]!;
    text = text.slice(scheme[0].length);
  }
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port < 1 || port > 65535) {
    throw new TypeError(
      `invalid provider address "${raw}": expected host:port, callisto://host:port or <transport>://host:port`,
    );
  }
  return { host: match[1]!, port, transport };
}

/** A fixed list of records, known at once. */
export function fixedFeed(records: readonly ProviderRecord[]): DirectoryFeed {
  return {
    ready: Promise.resolve(),
    start: (update) => update(records),
    whyEmpty: () => undefined,
    close: async () => {},
  };
}

/** The providers at direct addresses (`url`). */
export function directFeed(key: ServiceKey, addresses: readonly string[]): DirectoryFeed {
  return fixedFeed(
    addresses.map((raw) => {
      const { host, port, transport } = parseDirectAddress(raw);
      return directProviderRecord(key, `${host}:${port}`, transport);
    }),
  );
}

/** The app itself, for a service it provides (`injvm`): one endpoint. */
export function inProcessFeed(key: ServiceKey): DirectoryFeed {
  return fixedFeed([{ ...directProviderRecord(key, 'in-process:1'), transport: IN_PROCESS }]);
}

export interface RegistryFeedOptions {
  readonly key: ServiceKey;
  readonly registries: RegistrySet;
  readonly addresses: readonly string[];
  /** Announced in the consumer record. */
  readonly application: string;
  /** Whether a consumer record is written at all (`registerConsumer` of the reference). Default true. */
  readonly announce?: boolean;
  /** The methods this consumer has a mock for, announced in the consumer record (runtime control). */
  readonly mocks?: () => readonly string[];
  readonly snapshotDir: string;
  readonly emptyProtection: boolean;
  /** How long the first discovery waits for a registry's list before the snapshot (or none). */
  readonly startTimeoutMs: number;
  /**
   * Whether the consumer has a healthy connection to one of these providers (what empty-list protection
   * counts), and a way to hear when that may have changed.
   */
  readonly isHealthy: (record: ProviderRecord) => boolean;
  readonly onHealthChange: (listener: () => void) => () => void;
  readonly logger: Logger;
}

/** Registry feeds made by this process: each announces its consumer under its own key. */
let announcedFeeds = 0;

export function registryFeed(options: RegistryFeedOptions): DirectoryFeed {
  const { key, logger } = options;
  let targets: Registry[] = [];
  let followed: RegistryLists | undefined;
  let openError: string | undefined;
  let closed = false;
  let announced: { registries: Registry[]; record: ConsumerRecord } | undefined;
  let update: (records: readonly ProviderRecord[]) => void = () => {};
  let override: ((overrides: ServiceOverrides) => void) | undefined;
  let overrides: OverrideFeed | undefined;
  let empty = true;
  const explainer = createAbsenceExplainer({
    key,
    registries: () => targets,
    state: () => {
      if (openError !== undefined) return `cannot open the registries: ${openError}`;
      if (followed?.source === 'none') return 'no registry has delivered a list yet';
      if (followed?.source === 'snapshot') return 'using the snapshot of the last known list';
      return undefined;
    },
  });
  // A held empty list is applied as soon as the held providers say "going away" or their connections close.
  let stopRechecking: (() => void) | undefined;

  const follow = async (): Promise<void> => {
    try {
      targets = await options.registries.get(options.addresses);
    } catch (error) {
      openError = describeError(error);
      throw error;
    }
    if (closed) return;
    // Announce this consumer (`.../consumers/<host>:<pid>:<instance>`) without holding up discovery.
    const record: ConsumerRecord = {
      service: key.name,
      version: key.version,
      group: key.group,
      host: os.hostname(),
      pid: process.pid,
      application: options.application,
      startTime: Date.now(),
      instance: String(++announcedFeeds),
      mocks: [...(options.mocks?.() ?? [])],
    };
    if (options.announce !== false) {
      announced = { registries: targets, record };
      for (const registry of targets) {
        registry.registerConsumer(record).catch((error: Error) => {
          if (!closed)
            logger.warn(`cannot announce consumer of ${key.name} on ${registry.kind}: ${error.message}`);
        });
      }
    }
    stopRechecking = options.onHealthChange(() => followed?.recheck());
    followed = followRegistryLists({
      key,
      registries: targets,
      registrySnapshotPaths: registrySnapshotPaths(
        options.snapshotDir,
        options.addresses,
        servicePathSegment(key),
      ),
      legacySnapshotPath: options.snapshotDir
        ? `${options.snapshotDir}/${servicePathSegment(key)}.json`
        : undefined,
      emptyProtection: options.emptyProtection,
      startTimeoutMs: options.startTimeoutMs,
      hasHealthyConnections: (records) => records.some(options.isHealthy),
      onChange: (records) => update(records),
      log: (level, message) => logger[level](message),
    });
    if (override !== undefined) {
      const apply = override;
      overrides = followOverrides(
        key,
        targets,
        (next) => apply(next),
        options.startTimeoutMs,
        (message) => logger.warn(message),
      );
    }
    await Promise.all([followed.ready, overrides?.ready]);
    if (closed) {
      overrides?.close();
      await followed.close();
    }
    // The first calls will fail with NoProvider: have it say what the registries hold.
    else if (empty) await explainer.refresh();
  };

  let ready: Promise<void> | undefined;
  return {
    get ready() {
      return ready ?? Promise.resolve();
    },
    start(deliver, applyOverrides) {
      update = deliver;
      override = applyOverrides;
      ready = follow().catch((error: Error) => {
        logger.error(`cannot follow providers of ${key.name}: ${error.message}`);
      });
    },
    whyEmpty: () => explainer.explain(),
    changed(isEmpty) {
      empty = isEmpty;
      // Look up what the registries hold when the list empties (rate-limited), not per failing call.
      if (isEmpty) void explainer.refresh();
    },
    async close() {
      closed = true;
      await ready;
      stopRechecking?.();
      overrides?.close();
      await followed?.close();
      if (announced) {
        const { registries, record } = announced;
        await Promise.allSettled(registries.map((registry) => registry.unregisterConsumer(record)));
      }
    },
  };
}
