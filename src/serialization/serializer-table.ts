/**
 * A fast lookup of serializers by wire id (the frame header carries the id) and by configured name.
 */
import { RpcError } from '../core/rpc-error.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type {} from './extension.js';
import type { Serializer } from './serializer.js';

/** Lowest and highest valid serializer ids (the id is one byte; 0 means "none"). */
export const MIN_SERIALIZER_ID = 1;
export const MAX_SERIALIZER_ID = 255;

export interface SerializerTable {
  /** The serializer with wire id `id`, or `undefined`: an array index, cheap enough for every frame. */
  byId(id: number): Serializer | undefined;
  /** The serializer named `name`; throws an RpcError naming the ones in the table. */
  byName(name: string): Serializer;
  /** Every serializer in the table, in the order given. */
  readonly serializers: readonly Serializer[];
}

/**
 * Builds a table from the serializers registered in `registry` under `names` (default: all of them).
 * Throws when a name is not registered, an id is outside 1..255, or two serializers share an id.
 */
export function createSerializerTable(
  registry: ExtensionRegistry,
  names: readonly string[] = registry.names('serializer'),
): SerializerTable {
  const slots: Array<Serializer | undefined> = new Array(MAX_SERIALIZER_ID + 1).fill(undefined);
  const byName = new Map<string, Serializer>();
  const serializers: Serializer[] = [];
  for (const name of names) {
    const serializer = registry.get('serializer', name);
    const { id } = serializer;
    if (!Number.isInteger(id) || id < MIN_SERIALIZER_ID || id > MAX_SERIALIZER_ID) {
      throw new RpcError(
        'Internal',
        `serializer "${name}" has id ${id}; expected an integer from ${MIN_SERIALIZER_ID} to ${MAX_SERIALIZER_ID}`,
      );
    }
    const taken = slots[id];
    if (taken !== undefined && taken !== serializer) {
      throw new RpcError('Internal', `serializers "${taken.name}" and "${name}" both use id ${id}`);
    }
    slots[id] = serializer;
    byName.set(name, serializer);
    serializers.push(serializer);
  }
  return {
    byId(id) {
      return slots[id];
    },
    byName(name) {
      const found = byName.get(name);
      if (found === undefined) {
        throw new RpcError(
          'Internal',
          `no serializer named "${name}" (available: ${[...byName.keys()].join(', ') || 'none'})`,
        );
      }
      return found;
    },
    serializers,
  };
}
