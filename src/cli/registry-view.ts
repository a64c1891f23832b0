/**
 * What a registry holds, read through the public registry contract: the service keys (`services()`),
 * and for one key its providers (a one-off subscription: the records as consumers see them, invalid
 * entries skipped and logged by the registry) and its consumers (`consumers(key)`).
 */
import type { ServiceKey } from '../index.js';
import {
  type ConsumerRecord,
  type ProviderRecord,
  type Registry,
  type ServiceListing,
  type ServiceOverrides,
  withoutToken,
} from '../registry/index.js';
import { CliError, ExitCode } from '../tools/exit-codes.js';

export interface KeyView {
  readonly key: ServiceKey;
  readonly providers: ProviderRecord[];
  readonly consumers: ConsumerRecord[];
  /** The runtime control's override record (undefined when not asked for, or the registry has none). */
  readonly overrides: ServiceOverrides | undefined;
}

/** Every service key the registry holds; an error when it cannot list them. */
export async function listServices(registry: Registry, location: string): Promise<ServiceListing[]> {
  if (registry.services === undefined) {
    throw new CliError(ExitCode.Failed, `the ${registry.kind} registry ${location} cannot list its services`);
  }
  return registry.services();
}

/** The provider list of a key as consumers get it (subscribe, first list, unsubscribe). */
export async function readProviders(registry: Registry, key: ServiceKey): Promise<ProviderRecord[]> {
  let list: ProviderRecord[] = [];
  const unsubscribe = await registry.subscribe(key, (providers) => {
    list = providers;
  });
  unsubscribe();
  // a registry token is never printed
  return list.map(withoutToken);
}

/** Providers and consumers of a key; with `withOverrides`, its override record too (`ls` shows it). */
export async function readKey(registry: Registry, key: ServiceKey, withOverrides = false): Promise<KeyView> {
  const providers = await readProviders(registry, key);
  const consumers = registry.consumers ? await registry.consumers(key) : [];
  const overrides = withOverrides && registry.readOverrides ? await registry.readOverrides(key) : undefined;
  return { key, providers, consumers, overrides };
}

/** `example.UserService 1.0.0`, `example.UserService 1.0.0 group blue`. */
export function keyLabel(key: { name: string; version: string; group: string }): string {
  return `${key.name} ${key.version}${key.group ? ` group ${key.group}` : ''}`;
}
