/**
 * A fast lookup of compressors by wire id (byte 7 of a frame header) and by configured name.
 */
import { RpcError } from '../../core/rpc-error.js';
import type { ExtensionTable } from '../../extension/extension-registry.js';
import { type Compressor, MAX_COMPRESSOR_ID, MIN_COMPRESSOR_ID } from './compressor.js';
import type {} from './extension.js';
import { BUILTIN_COMPRESSORS } from './zlib-compressors.js';

export interface CompressorTable {
  /** The compressor with wire id `id`, or `undefined`. */
  byId(id: number): Compressor | undefined;
  /** The compressor named `name`; throws an RpcError naming the ones in the table. */
  byName(name: string): Compressor;
}

/**
 * Builds a table from the compressors registered in `extensions` (or the given ones). Throws when an id
 * is outside 0..255 or two compressors share an id.
 */
export function createCompressorTable(extensions: ExtensionTable | readonly Compressor[]): CompressorTable {
  const list = Array.isArray(extensions)
    ? (extensions as readonly Compressor[])
    : (extensions as ExtensionTable)
        .names('compressor')
        .map((name) => (extensions as ExtensionTable).get('compressor', name));
  const slots: Array<Compressor | undefined> = new Array(MAX_COMPRESSOR_ID + 1).fill(undefined);
  const byName = new Map<string, Compressor>();
  for (const compressor of list) {
    const { id, name } = compressor;
    if (!Number.isInteger(id) || id < MIN_COMPRESSOR_ID || id > MAX_COMPRESSOR_ID) {
      throw new RpcError(
        'Internal',
        `compressor "${name}" has id ${id}; expected an integer from ${MIN_COMPRESSOR_ID} to ${MAX_COMPRESSOR_ID}`,
      );
    }
    const taken = slots[id];
    if (taken !== undefined && taken !== compressor) {
      throw new RpcError('Internal', `compressors "${taken.name}" and "${name}" both use id ${id}`);
    }
    slots[id] = compressor;
    byName.set(name, compressor);
  }
  return {
    byId: (id) => slots[id],
    byName(name) {
      const found = byName.get(name);
      if (found === undefined) {
        throw new RpcError(
          'Internal',
          `no compressor named "${name}" (available: ${[...byName.keys()].join(', ') || 'none'})`,
        );
      }
      return found;
    },
  };
}

/** The built-in compressors: the table of a connection made without an app (tools, tests). */
export const BUILTIN_COMPRESSOR_TABLE: CompressorTable = createCompressorTable(
  Object.values(BUILTIN_COMPRESSORS),
);
