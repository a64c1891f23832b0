/**
 * The consumer's directories: one per service and source of providers (in-process, direct URLs, or a
 * set of registries, announced or not), shared by every reference to it and closed when the last
 * reference holding it lets go (releaseReference) or the consumer closes.
 */
import { ConfigError } from '../core/config-error.js';
import { serviceKeyString } from '../core/service-key.js';
import type { LogFields, Logger } from '../observability/logger.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { ConnectionPool } from './connection-pool.js';
import type { ConsumerSettings } from './consumer-settings.js';
import { createDirectory, type Directory } from './directory.js';
import { directFeed, inProcessFeed, registryFeed } from './directory-feed.js';
import type { CallTarget } from './endpoint.js';
import { IN_PROCESS } from './endpoint.js';
import type { MockCatalog } from './mock-methods.js';
import { recordThrough } from './reference-protocol.js';
import type { ReferenceTargets } from './reference-targets.js';

export interface DirectorySetParts {
  readonly settings: ConsumerSettings;
  readonly pool: ConnectionPool;
  readonly registries: RegistrySet;
  /** The app's own provider, as a call target (in-process calls). */
  readonly inProcessTarget: CallTarget;
  /** The methods with a mock per service, announced in the consumer records. */
  readonly mocks: MockCatalog;
  readonly logger: Logger;
}

/** Where a directory comes from: the app's own provider, or a reference's targets. */
export type DirectorySource = ReferenceTargets | 'in-process';

export interface DirectorySet {
  /** Every directory, by service key and source. */
  readonly all: ReadonlyMap<string, Directory>;
  /** The directory of a service and source (made on first use), and its key. */
  find(
    definition: ServiceDefinition<unknown>,
    source: DirectorySource,
    announce: boolean,
  ): { key: string; directory: Directory };
  /** One more reference holds the directory `key`. */
  hold(key: string): void;
  /** One reference lets go of the directory `key`; the last one out closes it. */
  letGo(key: string): Promise<void>;
  close(): Promise<void>;
  destroy(): void;
}

export function createDirectorySet(parts: DirectorySetParts): DirectorySet {
  const { settings, pool, logger } = parts;
  const directories = new Map<string, Directory>();
  /** References holding each directory. */
  const holders = new Map<string, number>();
  const log = (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) =>
    logger[level](message, fields);

  const make = (
    definition: ServiceDefinition<unknown>,
    source: DirectorySource,
    announce: boolean,
  ): Directory => {
    if (source === 'in-process') {
      return createDirectory({
        key: definition,
        feed: inProcessFeed(definition),
        link: () => ({ available: true, connection: () => parts.inProcessTarget }),
      });
    }
    const { urls, registries: addresses } = source;
    if (!urls?.length && addresses.length === 0) {
      throw new ConfigError(
        `refer(${definition.name}).url`,
        undefined,
        'a provider address (url) or a registry',
        {
          problem: `${definition.name} is no longer provided by this app and there is no registry`,
        },
      );
    }
    const link = (record: { host: string; port: number; transport?: string }) =>
      pool.handle(record.host, record.port, record.transport);
    const { protocol } = source;
    return createDirectory({
      key: definition,
      pool,
      link,
      log,
      protocol,
      feed: urls?.length
        ? directFeed(definition, urls)
        : registryFeed({
            key: definition,
            registries: parts.registries,
            addresses,
            application: settings.application,
            announce,
            mocks: () => parts.mocks.of(definition),
            snapshotDir: settings.consumer.snapshotDir,
            emptyProtection: settings.consumer.emptyProtection,
            startTimeoutMs: settings.startTimeoutMs,
            isHealthy: (listed) => {
              const record = recordThrough(listed, protocol);
              return (
                record !== undefined &&
                pool.isHealthy(pool.handle(record.host, record.port, record.transport).address)
              );
            },
            onHealthChange: (listener) => pool.onHealthChange(listener),
            logger,
          }),
    });
  };

  return {
    all: directories,
    find(definition, source, announce) {
      const key = `${serviceKeyString(definition)}|${sourceKey(source, announce)}`;
      let directory = directories.get(key);
      if (directory === undefined) {
        directory = make(definition, source, announce);
        directories.set(key, directory);
      }
      return { key, directory };
    },
    hold(key) {
      holders.set(key, (holders.get(key) ?? 0) + 1);
    },
    async letGo(key) {
      const left = (holders.get(key) ?? 1) - 1;
      if (left > 0) {
        holders.set(key, left);
        return;
      }
      holders.delete(key);
      const directory = directories.get(key);
      directories.delete(key);
      await directory?.close();
    },
    async close() {
      await Promise.all([...directories.values()].map((directory) => directory.close()));
      directories.clear();
      holders.clear();
    },
    destroy() {
      for (const directory of directories.values()) void directory.close();
      directories.clear();
      holders.clear();
    },
  };
}

/** The source part of a directory's key. */
function sourceKey(source: DirectorySource, announce: boolean): string {
  if (source === 'in-process') return IN_PROCESS;
  const through = source.protocol === 'callisto' ? '' : `|${source.protocol}`;
  if (source.urls?.length) return `url:${source.urls.join(',')}${through}`;
  return `registry:${source.registries.join(',')}${announce ? '' : '|unannounced'}${through}`;
}
