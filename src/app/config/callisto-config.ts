/**
 * The app's configuration: its own keys (declared here) composed with the keys each part declares with
 * its schema, meaning and default — the server's (provider/server-options.ts), the consumer's
 * (consumer/consumer-options.ts), the connections' (protocol/connection-options.ts). Nothing here
 * restates a part's default. The defaults object is also the list of keys that files, `.properties` and
 * `CALLISTO_*` variables may set; docs/configuration.md is generated from these files
 * (`npm run docs:config`).
 */
import { z } from 'zod';
import { adminConfigSchema, DEFAULT_ADMIN_CONFIG } from '../../admin/admin-options.js';
import {
  type ConsumerConfig,
  consumerConfigSchema,
  DEFAULT_CONSUMER_CONFIG,
} from '../../consumer/consumer-options.js';
import {
  DEFAULT_OBSERVABILITY_CONFIG,
  observabilityConfigSchema,
} from '../../observability/observability-options.js';
import { connectionConfigSchema, DEFAULT_CONNECTION_CONFIG } from '../../protocol/connection-options.js';
import {
  DEFAULT_SERVER_CONFIG,
  type ServerConfig,
  serverConfigSchema,
} from '../../provider/server-options.js';
import { DEFAULT_REGISTRY_OPTIONS } from '../../registry/registry.js';
import { DEFAULT_START_TIMEOUT_MS } from '../../registry/registry-set.js';

export type { ConsumerConfig, ServerConfig };
export { consumerConfigSchema, serverConfigSchema };

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

export const callistoConfigSchema = z.strictObject({
  /** Application name, announced to registries. Default 'callisto-app'. */
  application: z.string().min(1),
  /** Registry addresses (file://, etcd://, zookeeper://, redis://, direct://). Default [] (none). */
  registry: z.array(
    z
      .string()
      .regex(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//)
      .describe('a registry address kind://…, e.g. etcd://127.0.0.1:2379 or file://.callisto/registry'),
  ),
  /** How long a dead provider's registration may survive, ms. Default 10000. */
  registryTtlMs: z.number().int().min(1000),
  /** How long start() waits for the registries to take its registrations before failing, and a first discovery waits for a registry's list before using the snapshot, ms (an unreachable registry is logged at once, and retried meanwhile). Default 3000. */
  startTimeoutMs: positiveInt,
  ...connectionConfigSchema.shape,
  /** Graceful shutdown deadline, ms. Default 10000. */
  shutdownTimeoutMs: nonNegativeInt,
  /** Install SIGTERM/SIGINT handlers that close the app gracefully. Default false. */
  handleSignals: z.boolean(),
  /** Log level. Default 'info'. */
  logLevel: z.enum(LOG_LEVELS),
  /** Modules to load extensions from (each exports `register(extensions)`). Default []. */
  extensions: z.array(z.string()),
  server: serverConfigSchema,
  consumer: consumerConfigSchema,
  ...observabilityConfigSchema.shape,
  admin: adminConfigSchema,
});

export type CallistoConfig = z.infer<typeof callistoConfigSchema>;

/** What code passes: any subset, nested. */
export type CallistoConfigInput = {
  [K in keyof CallistoConfig]?: CallistoConfig[K] extends unknown[]
    ? CallistoConfig[K] | string
    : CallistoConfig[K] extends Record<string, unknown>
      ? SectionInput<CallistoConfig[K]>
      : CallistoConfig[K];
};

/** A section as code passes it: any subset, its own sections (`server.tls`) too. */
type SectionInput<S> = {
  [K in keyof S]?: S[K] extends unknown[]
    ? S[K]
    : S[K] extends Record<string, unknown>
      ? Partial<S[K]>
      : S[K];
};

export const DEFAULT_CONFIG: CallistoConfig = {
  application: 'callisto-app',
  registry: [],
  registryTtlMs: DEFAULT_REGISTRY_OPTIONS.ttlMs,
  startTimeoutMs: DEFAULT_START_TIMEOUT_MS,
  ...DEFAULT_CONNECTION_CONFIG,
  shutdownTimeoutMs: 10_000,
  handleSignals: false,
  logLevel: 'info',
  extensions: [],
  server: DEFAULT_SERVER_CONFIG,
  consumer: DEFAULT_CONSUMER_CONFIG,
  ...DEFAULT_OBSERVABILITY_CONFIG,
  admin: DEFAULT_ADMIN_CONFIG,
};
