/**
 * The registries of an app, created on first use from their addresses and shared by the provider and
 * consumer sides. Closed last on shutdown. Registrations made for `start()` are bounded: a registry
 * that cannot be reached does not leave `start()` hanging without a word.
 */
import { RpcError } from '../core/rpc-error.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import { createRegistry } from './create-registry.js';
import type { ProviderRecord } from './provider-record.js';
import type { Registry } from './registry.js';
import { describeRegistry } from './registry-description.js';

/**
 * How long `start()` waits for the registries to take its registrations, and a first discovery for a
 * registry's list, by default (`startTimeoutMs`), ms.
 */
export const DEFAULT_START_TIMEOUT_MS = 3_000;

export interface RegistrySet {
  /** The registries for these addresses, created (and connected) on first use. */
  get(addresses: readonly string[]): Promise<Registry[]>;
  /**
   * Registers `record` on every registry of `addresses`. A registry that has not taken it after a
   * second (or half of `timeoutMs`) is named in a warning with why it cannot be reached; after
   * `timeoutMs` this rejects with a Network error naming the registry, the reason and the setting
   * (`startTimeoutMs`), while the registry keeps retrying until it is closed.
   */
  register(addresses: readonly string[], record: ProviderRecord, timeoutMs: number): Promise<void>;
  /** Registries created so far. */
  created(): Promise<Registry[]>;
  close(): Promise<void>;
}

export function createRegistrySet(extensions: ExtensionRegistry, ttlMs: number, logger: Logger): RegistrySet {
  const registries = new Map<string, Promise<Registry>>();
  const log = (level: 'info' | 'warn' | 'error', message: string) => logger[level](message);
  const one = (address: string): Promise<Registry> => {
    let registry = registries.get(address);
    if (registry === undefined) {
      registry = createRegistry(address, { ttlMs, log }, extensions);
      registries.set(address, registry);
    }
    return registry;
  };

  const registerOn = (registry: Registry, record: ProviderRecord, timeoutMs: number): Promise<void> => {
    const what = `registering ${record.service}:${record.version} at ${record.host}:${record.port}`;
    let notice: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve, reject) => {
      notice = setTimeout(
        () =>
          logger.warn(
            `${what}: waiting for ${describeRegistry(registry)}; retrying, for up to ${timeoutMs} ms`,
          ),
        Math.min(1_000, Math.floor(timeoutMs / 2)),
      );
      deadline = setTimeout(
        () =>
          reject(
            new RpcError(
              'Network',
              `${what}: registry ${describeRegistry(registry)} did not take it within startTimeoutMs = ` +
                `${timeoutMs} ms; check that its server runs at that address, or raise startTimeoutMs`,
              { details: { registry: registry.location ?? registry.kind, startTimeoutMs: timeoutMs } },
            ),
          ),
        timeoutMs,
      );
      registry.register(record).then(resolve, reject);
    });
    return bounded.finally(() => {
      clearTimeout(notice);
      clearTimeout(deadline);
    });
  };

  return {
    get: (addresses) => Promise.all(addresses.map(one)),
    async register(addresses, record, timeoutMs) {
      const targets = await Promise.all(addresses.map(one));
      await Promise.all(targets.map((registry) => registerOn(registry, record, timeoutMs)));
    },
    async created() {
      const settled = await Promise.allSettled(registries.values());
      return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    },
    async close() {
      const settled = await Promise.allSettled(registries.values());
      registries.clear();
      await Promise.all(settled.map((s) => (s.status === 'fulfilled' ? s.value.close() : undefined)));
    },
  };
}
