/**
 * Where a reference's providers come from: direct addresses, or registries followed through a service
 * directory (snapshot, empty-list protection). Each source owns a ProviderDirectory of endpoints and
 * keeps the connection pool told which addresses are wanted (and which were announced anew). A
 * registry source also explains an empty list (for NoProvider): the registries asked, their state and
 * what they hold.
 */
import os from 'node:os';
import type { ServiceKey } from '../core/service-key.js';
import type { Logger } from '../observability/logger.js';
import { directProviderRecord } from '../registry/direct-registry.js';
import { createAbsenceExplainer } from '../registry/explain-absence.js';
import { type ConsumerRecord, servicePathSegment } from '../registry/provider-record.js';
import type { Registry } from '../registry/registry.js';
import type { RegistrySet } from '../registry/registry-set.js';
import { describeError } from '../registry/timing.js';
import { transportAddress } from '../transport/transport.js';
import type { ConnectionPool } from './connection-pool.js';
import { createProviderDirectory, type ProviderDirectory } from './provider-directory.js';
import { createServiceDirectory, type ServiceDirectory } from './registry-lists.js';

export interface ServiceSource {
  readonly directory: ProviderDirectory;
  /** Resolves once the first provider list is known (immediately for direct addresses). */
  readonly ready: Promise<void>;
  readonly isReady: boolean;
  close(): Promise<void>;
}

function trackConnections(directory: ProviderDirectory, pool: ConnectionPool): () => void {
  for (const endpoint of directory.list()) pool.retain(endpoint.host, endpoint.port, endpoint.transport);
  return directory.onChange((added, removed, renewed) => {
    for (const endpoint of added) pool.retain(endpoint.host, endpoint.port, endpoint.transport);
    for (const endpoint of removed) pool.release(endpoint.address);
    for (const endpoint of renewed) pool.renew(endpoint.address);
  });
}

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

export function createDirectSource(
  key: ServiceKey,
  addresses: readonly string[],
  pool: ConnectionPool,
): ServiceSource {
  const records = addresses.map((raw) => {
    const { host, port, transport } = parseDirectAddress(raw);
    return directProviderRecord(key, `${host}:${port}`, transport);
  });
  const directory = createProviderDirectory(records);
  const stopTracking = trackConnections(directory, pool);
  return {
    directory,
    ready: Promise.resolve(),
    isReady: true,
    async close() {
      stopTracking();
      for (const endpoint of directory.list()) pool.release(endpoint.address);
      directory.close();
    },
  };
}

export interface RegistrySourceOptions {
  addresses: readonly string[];
  /** Announced in the consumer record. */
  application: string;
  snapshotDir: string;
  emptyProtection: boolean;
  /** How long the first discovery waits for a registry's list before the snapshot (or none). */
  startTimeoutMs: number;
}

export function createRegistrySource(
  key: ServiceKey,
  registries: RegistrySet,
  pool: ConnectionPool,
  options: RegistrySourceOptions,
  logger: Logger,
): ServiceSource {
  let targets: Registry[] = [];
  let followed: ServiceDirectory | undefined;
  let openError: string | undefined;
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
  const directory = createProviderDirectory([], () => explainer.explain());
  const stopTracking = trackConnections(directory, pool);
  // Look up what the registries hold when the list empties (rate-limited), not per failing call.
  directory.onChange(() => {
    if (directory.list().length === 0) void explainer.refresh();
  });
  // A held empty list is applied as soon as the held providers say "going away" or their connections close.
  const stopRechecking = pool.onHealthChange(() => followed?.recheck());
  let isReady = false;
  let closed = false;
  let announced: { registries: Registry[]; record: ConsumerRecord } | undefined;
  const ready = (async () => {
    try {
      targets = await registries.get(options.addresses);
    } catch (error) {
      openError = describeError(error);
      throw error;
    }
    if (closed) return;
    // Announce this consumer (`.../consumers/<host>:<pid>`) without holding up discovery.
    const record: ConsumerRecord = {
      service: key.name,
      version: key.version,
      group: key.group,
      host: os.hostname(),
      pid: process.pid,
      application: options.application,
      startTime: Date.now(),
    };
    announced = { registries: targets, record };
    for (const registry of targets) {
      registry.registerConsumer(record).catch((error: Error) => {
        if (!closed)
          logger.warn(`cannot announce consumer of ${key.name} on ${registry.kind}: ${error.message}`);
      });
    }
    followed = createServiceDirectory({
      key,
      registries: targets,
      snapshotPath: options.snapshotDir
        ? `${options.snapshotDir}/${servicePathSegment(key)}.json`
        : undefined,
      emptyProtection: options.emptyProtection,
      startTimeoutMs: options.startTimeoutMs,
      hasHealthyConnections: (records) =>
        records.some((record) =>
          pool.isHealthy(transportAddress(record.host, record.port, record.transport)),
        ),
      onChange: (records) => directory.update(records),
      log: (level, message) => logger[level](message),
    });
    await followed.ready;
    if (closed) await followed.close();
    // The first calls will fail with NoProvider: have it say what the registries hold.
    else if (directory.list().length === 0) await explainer.refresh();
  })().then(
    () => {
      isReady = true;
    },
    (error: Error) => {
      isReady = true;
      logger.error(`cannot follow providers of ${key.name}: ${error.message}`);
    },
  );
  return {
    directory,
    ready,
    get isReady() {
      return isReady;
    },
    async close() {
      closed = true;
      await ready;
      stopRechecking();
      await followed?.close();
      if (announced) {
        const { registries: targets, record } = announced;
        await Promise.allSettled(targets.map((registry) => registry.unregisterConsumer(record)));
      }
      stopTracking();
      for (const endpoint of directory.list()) pool.release(endpoint.address);
      directory.close();
    },
  };
}
