/**
 * The provider's registrations: one provider record per provided service (registry/provider-record.ts),
 * written to the app's registries once the server listens (or, for a service provided later, at once),
 * and removed at shutdown.
 */
import type { Logger } from '../observability/logger.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { RegistrySet } from '../registry/registry-set.js';
import type { ProviderOptions } from './provider-options.js';
import type { ExportedService } from './service-table.js';

/** Where the provider is reached, once started. */
export interface ServedAt {
  readonly host: string;
  readonly port: number;
  /** The HTTP/JSON entry's port, when it is on. */
  readonly httpPort?: number | undefined;
  /** The admin endpoints as other hosts reach them, when they are on. */
  readonly admin?: { host: string; port: number } | undefined;
  /** Set on the primary of `server.workers` > 1. */
  readonly workers?: number | undefined;
}

/** One provided service as registered. */
export interface Registered {
  readonly exported: ExportedService;
  /** The registries it is registered in (`provide(…, { registries })`); none: not registered. */
  readonly registries: readonly string[];
  /** The entries it is served on remotely, as its record says (`callisto`, `http`). */
  readonly protocols: readonly string[];
  readonly weight: number | undefined;
  readonly tags: Readonly<Record<string, string>> | undefined;
}

export interface Registration {
  /** Registers one service (nothing without registries). */
  register(service: Registered, at: ServedAt): Promise<void>;
  /** The records registered so far. */
  records(): ProviderRecord[];
  /** Removes every registration (errors ignored: the registry's TTL removes what is left). */
  unregisterAll(): Promise<void>;
}

export interface RegistrationParts {
  readonly options: ProviderOptions;
  /** `server.auth.registryToken`: the token written in every record. */
  readonly token?: string | undefined;
  readonly registries: RegistrySet;
  /** The names of the serializers the server accepts. */
  readonly serializers: () => readonly string[];
  readonly logger: Logger;
}

export function createRegistration(parts: RegistrationParts): Registration {
  const { options, registries, logger } = parts;
  const startTime = Date.now();
  const registered: { record: ProviderRecord; registries: readonly string[] }[] = [];

  const recordOf = (service: Registered, at: ServedAt): ProviderRecord => {
    const { definition, methods } = service.exported;
    return {
      service: definition.name,
      version: definition.version,
      group: definition.group,
      host: at.host,
      port: at.port,
      protocol: 'callisto',
      ...(options.transport === 'tcp' ? {} : { transport: options.transport }),
      ...(at.httpPort === undefined || !service.protocols.includes('http')
        ? {}
        : { http: { port: at.httpPort } }),
      protocols: [...service.protocols],
      ...(options.transport === 'tls' ? { tls: true as const } : {}),
      serializers: [...parts.serializers()],
      weight: service.weight ?? options.weight,
      methods: [...methods.keys()],
      application: options.application,
      pid: process.pid,
      startTime,
      tags: {
        ...options.tags,
        ...service.tags,
        ...(at.workers === undefined ? {} : { workers: String(at.workers) }),
      },
      ...(at.admin === undefined ? {} : { admin: at.admin }),
      ...(parts.token === undefined ? {} : { token: parts.token }),
    };
  };

  return {
    async register(service, at) {
      if (service.registries.length === 0) return;
      const record = recordOf(service, at);
      registered.push({ record, registries: service.registries });
      await registries.register(service.registries, record, options.startTimeoutMs);
      logger.info(`registered ${record.service}:${record.version} at ${record.host}:${record.port}`);
    },
    records: () => registered.map((entry) => entry.record),
    async unregisterAll() {
      await Promise.allSettled(
        registered.map(async ({ record, registries: addresses }) => {
          const targets = await registries.get(addresses).catch(() => []);
          await Promise.allSettled(targets.map((registry) => registry.unregister(record)));
        }),
      );
    },
  };
}
