/**
 * Where a reference's providers come from: direct addresses, or registries followed through a service
 * directory (snapshot, empty-list protection). Each source owns a ProviderDirectory of endpoints and
 * keeps the connection pool told which addresses are wanted.
 */
import os from 'node:os';
import type { ConnectionPool } from '../client/connection-pool.js';
import { createProviderDirectory, type ProviderDirectory } from '../cluster/provider-directory.js';
import type { ServiceKey } from '../core/service-key.js';
import type { Logger } from '../observability/logger.js';
import { directProviderRecord } from '../registry/direct-registry.js';
import { type ConsumerRecord, servicePathSegment } from '../registry/provider-record.js';
import type { Registry } from '../registry/registry.js';
import { createServiceDirectory } from '../registry/service-directory.js';
import type { RegistrySet } from './registry-set.js';

export interface ServiceSource {
  readonly directory: ProviderDirectory;
  /** Resolves once the first provider list is known (immediately for direct addresses). */
  readonly ready: Promise<void>;
  readonly isReady: boolean;
  close(): Promise<void>;
}

function trackConnections(directory: ProviderDirectory, pool: ConnectionPool): () => void {
  for (const endpoint of directory.list()) pool.retain(endpoint.host, endpoint.port);
  return directory.onChange((added, removed) => {
    for (const endpoint of added) pool.retain(endpoint.host, endpoint.port);
    for (const endpoint of removed) pool.release(endpoint.address);
  });
}

/** Parses `host:port` or `callisto://host:port`. */
export function parseDirectAddress(raw: string): { host: string; port: number } {
  const text = raw
    .trim()
    .replace(/^callisto:\/\//, '')
    .replace(/\/$/, '');
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port < 1 || port > 65535) {
    throw new TypeError(`invalid provider address "${raw}": expected host:port or callisto://host:port`);
  }
  return { host: match[1]!, port };
}

export function createDirectSource(
  key: ServiceKey,
  addresses: readonly string[],
  pool: ConnectionPool,
): ServiceSource {
  const records = addresses.map((raw) => {
    const { host, port } = parseDirectAddress(raw);
    return directProviderRecord(key, `${host}:${port}`);
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
}

export function createRegistrySource(
  key: ServiceKey,
  registries: RegistrySet,
  pool: ConnectionPool,
  options: RegistrySourceOptions,
  logger: Logger,
): ServiceSource {
  const directory = createProviderDirectory();
  const stopTracking = trackConnections(directory, pool);
  let isReady = false;
  let closed = false;
  let stopFollowing: (() => Promise<void> | void) | undefined;
  let announced: { registries: Registry[]; record: ConsumerRecord } | undefined;
  const ready = (async () => {
    const targets = await registries.get(options.addresses);
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
    const followed = createServiceDirectory({
      key,
      registries: targets,
      snapshotPath: options.snapshotDir
        ? `${options.snapshotDir}/${servicePathSegment(key)}.json`
        : undefined,
      emptyProtection: options.emptyProtection,
      hasHealthyConnections: (records) =>
        records.some((record) => pool.isAvailable(`${record.host}:${record.port}`)),
      onChange: (records) => directory.update(records),
      log: (level, message) => logger[level](message),
    });
    stopFollowing = () => followed.close();
    await followed.ready;
    if (closed) await followed.close();
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
      await stopFollowing?.();
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
