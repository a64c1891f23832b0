/**
 * The `msgpack` serializer (id 2), the default, built on msgpackr.
 *
 * Every frame is self-describing: records (msgpackr's shared-structure extension) are off, so no state
 * is shared between the encoder of one process and the decoder of another, and objects are standard
 * MessagePack maps (also the fastest choice for the small objects of RPC calls).
 *
 * Round-trips: strings, numbers (NaN and ±Infinity included), booleans, null, `undefined` (as a
 * property value, the key kept, and as an array element), arrays, plain objects, `Date`, bigint (int64 /
 * uint64 on the wire, larger ones through msgpackr's bigint extension), `Map` (any key type, order
 * kept), `Set`, `Buffer` (decoded as a `Buffer`), `Uint8Array` and other typed arrays (decoded as their
 * own type), `RegExp`, `Error` (name, message, cause).
 *
 * Byte arrays: a `Buffer` or `Uint8Array` under {@link LARGE_BYTES} (64 KiB) is copied out of the body it
 * arrives in (it must not keep a socket chunk of other frames alive). One of LARGE_BYTES or more travels
 * as extension type {@link MSGPACK_LARGE_UINT8ARRAY_EXTENSION} or {@link MSGPACK_LARGE_BUFFER_EXTENSION}
 * (its bytes, as they are) and decodes as a view of the body, without a copy: a body that large has a
 * buffer of its own (the frame decoder joins a frame over many socket chunks into one of its exact size;
 * an inflated body is fresh too), which the view then keeps alive, and nothing writes to it again. Its
 * `byteOffset` is then not 0 (as with Node's pooled Buffers): read it through the view, or copy it
 * before taking `.buffer` as a whole. For a 1 MiB `Uint8Array` echoed (bench S4-1M) the copy was a
 * quarter of the throughput: 71–77 % of the `node:net` baseline's MiB/s with it, 83–104 % without.
 * Other typed arrays are copied as msgpackr does (their elements must be aligned).
 *
 * Known losses: `-0` decodes as `0`; class instances decode as plain objects; an own `__proto__` key
 * decodes as `__proto_` (msgpackr never lets a payload set a prototype).
 *
 * Bounded decoding: `measure` is a structural scan (msgpack-scan.ts) that counts elements and depth
 * without building anything; receivers run it on large bodies before decoding.
 *
 * Maps: with records off, msgpackr writes a `Map` and a plain object the same way, so before packing
 * the value is walked once and every `Map` is swapped for a {@link PackedMap} (containers on the path to
 * it are copied; the caller's value is never changed), which travels as extension type
 * {@link MSGPACK_MAP_EXTENSION} holding `[k1, v1, k2, v2, ...]`. A value without a Map costs one
 * allocation-free walk. The extension is registered in msgpackr's process-wide table, keyed by a private
 * class, so it does not change how other msgpackr users in the process pack their values.
 */
import { addExtension, Packr } from 'msgpackr';
import { createMsgpackScanner } from './msgpack-scan.js';
import type { Serializer } from './serializer.js';

/** Wire id of the msgpack serializer. */
export const MSGPACK_SERIALIZER_ID = 2;

/** MessagePack extension type carrying a `Map` (0x4d, "M"). */
export const MSGPACK_MAP_EXTENSION = 0x4d;

/** MessagePack extension type carrying a `Uint8Array` of {@link LARGE_BYTES} or more (0x55, "U"). */
export const MSGPACK_LARGE_UINT8ARRAY_EXTENSION = 0x55;
/** MessagePack extension type carrying a `Buffer` of {@link LARGE_BYTES} or more (0x56, "V"). */
export const MSGPACK_LARGE_BUFFER_EXTENSION = 0x56;
/** A byte array this large or larger decodes as a view of the body it arrived in. */
export const LARGE_BYTES = 64 * 1024;

/** Nesting deeper than this throws (it is also how cycles are reported). */
export const MAX_MSGPACK_DEPTH = 1000;

/** A Map on its way to the wire: its entries, flattened and already prepared. */
class PackedMap {
  constructor(readonly flat: unknown[]) {}
}

addExtension({
  Class: PackedMap,
  type: MSGPACK_MAP_EXTENSION,
  write: (packed: PackedMap) => packed.flat,
  read: (flat: unknown) => {
    if (!Array.isArray(flat) || flat.length % 2 !== 0) throw new TypeError('malformed msgpack Map extension');
    const map = new Map<unknown, unknown>();
    for (let i = 0; i < flat.length; i += 2) map.set(flat[i], flat[i + 1]);
    return map;
  },
});

/** Creates the `msgpack` serializer. */
export function createMsgpackSerializer(): Serializer {
  const packr = new Packr({
    useRecords: false,
    mapsAsObjects: true,
    moreTypes: true,
    structuredClone: false,
    useBigIntExtension: true,
    copyBuffers: true,
    int64AsType: 'bigint',
  });
  const scanner = createMsgpackScanner(
    [MSGPACK_MAP_EXTENSION],
    [MSGPACK_LARGE_UINT8ARRAY_EXTENSION, MSGPACK_LARGE_BUFFER_EXTENSION],
  );
  return {
    id: MSGPACK_SERIALIZER_ID,
    name: 'msgpack',
    encode(value) {
      return packr.pack(typeof value === 'object' && value !== null ? prepare(value, 0) : value);
    },
    decode(bytes) {
      // An Error in the payload would capture this decoder's stack (700 bytes and microseconds each,
      // and meaningless here): decoded errors carry their name, message and cause only.
      const stackTraceLimit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        return packr.unpack(
          Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        );
      } finally {
        Error.stackTraceLimit = stackTraceLimit;
      }
    },
    measure(bytes, maxElements) {
      return scanner.scan(bytes, maxElements);
    },
  };
}

type AnyRecord = Record<string, unknown>;

/** A large `Uint8Array` on its way to the wire (its bytes, copied once into the body by msgpackr). */
class LargeUint8Array {
  constructor(readonly bytes: Uint8Array) {}
}
/** A large `Buffer` on its way to the wire. */
class LargeBuffer {
  constructor(readonly bytes: Buffer) {}
}

addExtension({
  Class: LargeUint8Array,
  type: MSGPACK_LARGE_UINT8ARRAY_EXTENSION,
  pack: (large: LargeUint8Array) => large.bytes,
  // a hostile peer may send a small one: copied, so that it keeps nothing else alive
  unpack: (data: Buffer) =>
    data.length >= LARGE_BYTES
      ? new Uint8Array(data.buffer, data.byteOffset, data.length)
      : new Uint8Array(data),
});
addExtension({
  Class: LargeBuffer,
  type: MSGPACK_LARGE_BUFFER_EXTENSION,
  pack: (large: LargeBuffer) => large.bytes,
  unpack: (data: Buffer) => (data.length >= LARGE_BYTES ? data : Buffer.from(data)),
});

/**
 * `value` itself when it holds no Map and no large byte array, else a copy in which every Map is a
 * {@link PackedMap} and every large byte array a {@link LargeUint8Array} or {@link LargeBuffer}.
 */
function prepare(value: object, depth: number): unknown {
  if (depth >= MAX_MSGPACK_DEPTH) {
    throw new RangeError(`msgpack value nested deeper than ${MAX_MSGPACK_DEPTH} levels (or cyclic)`);
  }
  const ctor = value.constructor;
  if (ctor === Object) return prepareRecord(value as AnyRecord, depth + 1);
  if (ctor === Array) return prepareArray(value as unknown[], depth + 1);
  if (ctor === undefined) return prepareRecord(value as AnyRecord, depth + 1);
  if (Array.isArray(value)) return prepareArray(value, depth + 1);
  if (value instanceof Map) {
    const flat: unknown[] = new Array(value.size * 2);
    let i = 0;
    for (const [k, v] of value) {
      flat[i++] = prepareChild(k, depth + 1);
      flat[i++] = prepareChild(v, depth + 1);
    }
    return new PackedMap(flat);
  }
  if (value instanceof Set) {
    let changed = false;
    const items: unknown[] = [];
    for (const item of value) {
      const prepared = prepareChild(item, depth + 1);
      if (prepared !== item) changed = true;
      items.push(prepared);
    }
    return changed ? new Set(items) : value;
  }
  if (ArrayBuffer.isView(value)) {
    if (value.byteLength < LARGE_BYTES) return value;
    if (ctor === Uint8Array) return new LargeUint8Array(value as Uint8Array);
    if (Buffer.isBuffer(value)) return new LargeBuffer(value);
    return value;
  }
  if (
    value instanceof Date ||
    value instanceof ArrayBuffer ||
    value instanceof RegExp ||
    value instanceof Error
  ) {
    return value;
  }
  // a class instance: msgpackr packs its toJSON() or its own properties
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return prepareChild(toJSON.call(value), depth + 1);
  return prepareRecord(value as AnyRecord, depth + 1);
}

function prepareChild(value: unknown, depth: number): unknown {
  return typeof value === 'object' && value !== null ? prepare(value, depth) : value;
}

function prepareArray(array: readonly unknown[], depth: number): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    const prepared = typeof item === 'object' && item !== null ? prepare(item, depth) : item;
    if (prepared !== item && out === undefined) out = array.slice(0, i);
    if (out !== undefined) out.push(prepared);
  }
  return out ?? (array as unknown[]);
}

function prepareRecord(record: AnyRecord, depth: number): AnyRecord {
  let out: AnyRecord | undefined;
  for (const key in record) {
    const item = record[key];
    const prepared = typeof item === 'object' && item !== null ? prepare(item, depth) : item;
    if (prepared !== item && out === undefined) {
      out = {};
      for (const before in record) {
        if (before === key) break;
        if (Object.hasOwn(record, before)) Object.defineProperty(out, before, ownValue(record[before]));
      }
    }
    if (out !== undefined && Object.hasOwn(record, key)) Object.defineProperty(out, key, ownValue(prepared));
  }
  return out ?? record;
}

function ownValue(value: unknown): PropertyDescriptor {
  return { value, enumerable: true, writable: true, configurable: true };
}
