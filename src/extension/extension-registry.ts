/**
 * The extension registry (Dubbo's SPI): factories keyed by kind and name. Built-ins are registered by
 * default; registering the same kind and name again overrides it (user extensions win); configuration
 * selects implementations by name.
 */
import { RpcError } from '../core/rpc-error.js';

/** Maps each extension kind to the type of its factory. Other modules augment this interface. */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by each extension point
export interface ExtensionKinds {}

export type ExtensionKind = keyof ExtensionKinds & string;

export interface ExtensionRegistry {
  /** Registers (or overrides) an extension. */
  register<K extends ExtensionKind>(kind: K, name: string, factory: ExtensionKinds[K]): void;
  /** The extension registered under `kind`/`name`; throws a clear error naming what exists if none. */
  get<K extends ExtensionKind>(kind: K, name: string): ExtensionKinds[K];
  /** Whether an extension is registered. */
  has(kind: ExtensionKind, name: string): boolean;
  /** Names registered for a kind. */
  names(kind: ExtensionKind): string[];
  /** A copy whose registrations do not affect this one (per-app overrides on top of built-ins). */
  fork(): ExtensionRegistry;
}

export function createExtensionRegistry(
  entries: Map<string, Map<string, unknown>> = new Map(),
): ExtensionRegistry {
  const table = entries;
  const kindTable = (kind: string): Map<string, unknown> => {
    let byName = table.get(kind);
    if (!byName) {
      byName = new Map();
      table.set(kind, byName);
    }
    return byName;
  };
  return {
    register(kind, name, factory) {
      kindTable(kind).set(name, factory);
    },
    get(kind, name) {
      const found = table.get(kind)?.get(name);
      if (found === undefined) {
        const known = [...(table.get(kind)?.keys() ?? [])].join(', ') || 'none';
        throw new RpcError('Internal', `no ${kind} extension named "${name}" (registered: ${known})`);
      }
      return found as never;
    },
    has(kind, name) {
      return table.get(kind)?.has(name) ?? false;
    },
    names(kind) {
      return [...(table.get(kind)?.keys() ?? [])];
    },
    fork() {
      const copy = new Map<string, Map<string, unknown>>();
      for (const [kind, byName] of table) copy.set(kind, new Map(byName));
      return createExtensionRegistry(copy);
    },
  };
}

/** The process-wide registry holding the built-ins; each app forks it. */
export const builtinExtensions: ExtensionRegistry = createExtensionRegistry();
