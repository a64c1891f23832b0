/**
 * Extensions (Dubbo's SPI): factories keyed by kind and name; configuration selects implementations by
 * name. Two things, never mixed up:
 *
 * - the **built-ins**, a constant table frozen at load (app/builtin-extensions.ts): importing a module
 *   never changes what another app gets;
 * - an **app's registry**, made from the built-ins when the app is built, where the app's own
 *   extensions go (`callisto({ extend })`, config `extensions` modules); registering a name a built-in
 *   uses overrides it, for that app only.
 */
import { RpcError } from '../core/rpc-error.js';

/** Maps each extension kind to the type of its factory. Other modules augment this interface. */
// biome-ignore lint/suspicious/noEmptyInterface: augmented by each extension point
export interface ExtensionKinds {}

export type ExtensionKind = keyof ExtensionKinds & string;

/** Extensions to look up (read-only). */
export interface ExtensionTable {
  /** The extension registered under `kind`/`name`; throws a clear error naming what exists if none. */
  get<K extends ExtensionKind>(kind: K, name: string): ExtensionKinds[K];
  /** Whether an extension is registered. */
  has(kind: ExtensionKind, name: string): boolean;
  /** Names registered for a kind. */
  names(kind: ExtensionKind): string[];
  /** The kinds with at least one extension. */
  kinds(): ExtensionKind[];
}

/** An app's extensions: the built-ins and the app's own. */
export interface ExtensionRegistry extends ExtensionTable {
  /** Registers (or overrides) an extension, in this registry only. */
  register<K extends ExtensionKind>(kind: K, name: string, factory: ExtensionKinds[K]): void;
  /** A copy whose registrations do not affect this one. */
  fork(): ExtensionRegistry;
}

/** Extensions by kind, then by name. */
export type ExtensionEntries = {
  readonly [K in ExtensionKind]?: Readonly<Record<string, ExtensionKinds[K]>>;
};

type Entries = Map<string, Map<string, unknown>>;

function lookup(table: Entries): ExtensionTable {
  return {
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
    kinds() {
      return [...table.keys()] as ExtensionKind[];
    },
  };
}

function entriesOf(base: ExtensionTable | ExtensionEntries | undefined): Entries {
  const table: Entries = new Map();
  if (base === undefined) return table;
  if (typeof (base as ExtensionTable).kinds === 'function') {
    const from = base as ExtensionTable;
    for (const kind of from.kinds()) {
      table.set(kind, new Map(from.names(kind).map((name) => [name, from.get(kind, name)])));
    }
    return table;
  }
  for (const [kind, byName] of Object.entries(base as ExtensionEntries)) {
    table.set(kind, new Map(Object.entries(byName as Record<string, unknown>)));
  }
  return table;
}

/** A constant table of extensions: frozen, nothing can be registered into it. */
export function createExtensionTable(entries: ExtensionEntries): ExtensionTable {
  return Object.freeze(lookup(entriesOf(entries)));
}

/** An app's registry: a copy of `base` (the built-ins) that the app's own extensions are added to. */
export function createExtensionRegistry(base?: ExtensionTable): ExtensionRegistry {
  const table = entriesOf(base);
  const registry: ExtensionRegistry = {
    ...lookup(table),
    register(kind, name, factory) {
      let byName = table.get(kind);
      if (byName === undefined) {
        byName = new Map();
        table.set(kind, byName);
      }
      byName.set(name, factory);
    },
    fork() {
      return createExtensionRegistry(registry);
    },
  };
  return registry;
}
