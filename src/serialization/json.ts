/**
 * The `json` serializer (id 1): UTF-8 JSON that keeps what plain JSON loses.
 *
 * ## Encoding
 *
 * A value JSON can carry as it is (string, finite number other than -0, boolean, null, array, plain
 * object) is written as plain JSON. Everything else is written as a *tagged object*: an object whose
 * first key is `$t` (the tag) and whose `v` key holds the payload:
 *
 * | value                         | tagged form                               |
 * | ----------------------------- | ----------------------------------------- |
 * | `undefined`                   | `{"$t":"u"}`                              |
 * | `NaN`, `±Infinity`, `-0`      | `{"$t":"f","v":"NaN"}` (`"Infinity"`, `"-Infinity"`, `"-0"`) |
 * | bigint                        | `{"$t":"n","v":"-123"}` (decimal)         |
 * | `Date`                        | `{"$t":"D","v":1700000000000}` (ms; `null` for an invalid date; an ISO date string is read too) |
 * | `Map`                         | `{"$t":"M","v":[k1,v1,k2,v2,...]}` (insertion order, any key type) |
 * | `Set`                         | `{"$t":"S","v":[e1,e2,...]}`              |
 * | `Buffer`                      | `{"$t":"B","v":"<base64>"}`               |
 * | other typed array             | `{"$t":"T","v":["Uint8Array","<base64>"]}` |
 * | object with its own `$t` key  | `{"$t":"o","v":{...the object...}}` (escape: `v` itself is not read as a tag) |
 *
 * Keys and elements inside the payloads are encoded the same way, recursively. `undefined` is kept as an
 * object property value (the key survives) and as an array element. Class instances are written like
 * `JSON.stringify` writes them (their `toJSON()` if they have one, else their own enumerable properties)
 * and come back as plain objects. Functions and symbols follow `JSON.stringify` too (dropped from
 * objects, `null` in arrays).
 *
 * Decoded `Buffer`s come back as `Buffer`; other typed arrays (including a plain `Uint8Array`) as their
 * own type, in a fresh, aligned `ArrayBuffer`.
 *
 * ## Safety
 *
 * An object with an own `__proto__` key is refused, on both sides: `decode` throws on it (so a payload
 * can never hand a prototype-setting key to code that later merges the result), and `encode` throws
 * too, so what encodes always decodes. Tags are read from a fixed table (no lookup of arbitrary names on
 * `globalThis`), payloads are type-checked, and nesting deeper than {@link MAX_JSON_DEPTH} (or a cycle)
 * throws instead of overflowing the stack. `measure` (json-scan.ts) counts what a body decodes into
 * without parsing it, so a receiver refuses an oversized structure before `JSON.parse` builds it.
 *
 * ## Speed
 *
 * Encoding walks the value once, copying only the containers on the path to a special value, then
 * calls `JSON.stringify` (no replacer). Decoding calls `JSON.parse` (no reviver), then walks the result
 * once, replacing tagged objects in place. A value without special values therefore costs one
 * allocation-free walk on top of plain JSON.
 */
import { scanJson } from './json-scan.js';
import type { Serializer } from './serializer.js';
import { TYPED_ARRAYS, type TypedArrayName } from './typed-arrays.js';

/** Wire id of the JSON serializer. */
export const JSON_SERIALIZER_ID = 1;

/** Nesting deeper than this throws (it is also how cycles are reported). */
export const MAX_JSON_DEPTH = 1000;

const TAG = '$t';
const UNDEFINED_TAG: Readonly<{ $t: 'u' }> = Object.freeze({ $t: 'u' });

type AnyRecord = Record<string, unknown>;

const DECIMAL = /^-?\d+$/;

/** Creates the `json` serializer. */
export function createJsonSerializer(): Serializer {
  return {
    id: JSON_SERIALIZER_ID,
    name: 'json',
    encode(value) {
      const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(toJsonSafe(value, 0));
      return Buffer.from(text, 'utf8');
    },
    decode(bytes) {
      const text = Buffer.isBuffer(bytes)
        ? bytes.toString('utf8')
        : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
      const parsed: unknown = JSON.parse(text);
      return typeof parsed === 'object' && parsed !== null ? revive(parsed, 0) : parsed;
    },
    measure: scanJson,
  };
}

// ---- encoding ----------------------------------------------------------------------------------------

/** Returns `value` itself when plain JSON carries it, else a JSON-safe copy using the tagged forms. */
function toJsonSafe(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return value - value !== 0 || (value === 0 && 1 / value < 0) ? specialNumber(value) : value;
    case 'bigint':
      return { $t: 'n', v: value.toString() };
    case 'undefined':
      return UNDEFINED_TAG;
    case 'object':
      if (value === null) return null;
      if (depth >= MAX_JSON_DEPTH) throw tooDeep();
      return objectToJsonSafe(value, depth + 1);
    default:
      // functions and symbols: left to JSON.stringify (dropped from objects, null in arrays)
      return value;
  }
}

function specialNumber(value: number): { $t: 'f'; v: string } {
  return {
    $t: 'f',
    v: Number.isNaN(value) ? 'NaN' : value === 0 ? '-0' : value > 0 ? 'Infinity' : '-Infinity',
  };
}

function objectToJsonSafe(value: object, depth: number): unknown {
  if (Array.isArray(value)) return arrayToJsonSafe(value, depth);
  const ctor = value.constructor;
  if (ctor === Object || ctor === undefined) return recordToJsonSafe(value as AnyRecord, depth);
  if (value instanceof Date) {
    const time = value.getTime();
    return { $t: 'D', v: Number.isNaN(time) ? null : time };
  }
  if (value instanceof Map) {
    const flat: unknown[] = new Array(value.size * 2);
    let i = 0;
    for (const [k, v] of value) {
      flat[i++] = toJsonSafe(k, depth);
      flat[i++] = toJsonSafe(v, depth);
    }
    return { $t: 'M', v: flat };
  }
  if (value instanceof Set) {
    const items: unknown[] = [];
    for (const item of value) items.push(toJsonSafe(item, depth));
    return { $t: 'S', v: items };
  }
  if (ArrayBuffer.isView(value)) return bytesToJsonSafe(value);
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return toJsonSafe(toJSON.call(value), depth);
  return instanceToJsonSafe(value as AnyRecord, depth);
}

function bytesToJsonSafe(view: ArrayBufferView): unknown {
  const bytes = Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  if (Buffer.isBuffer(view)) return { $t: 'B', v: bytes.toString('base64') };
  const name = view.constructor.name;
  if (!Object.hasOwn(TYPED_ARRAYS, name) || !(view instanceof TYPED_ARRAYS[name as TypedArrayName])) {
    throw new TypeError(`json serializer cannot encode a ${name}`);
  }
  return { $t: 'T', v: [name, bytes.toString('base64')] };
}

function arrayToJsonSafe(array: readonly unknown[], depth: number): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    const safe = isPlainLeaf(item) ? item : toJsonSafe(item, depth);
    if (safe !== item && out === undefined) out = array.slice(0, i);
    if (out !== undefined) out.push(safe);
  }
  return out ?? (array as unknown[]);
}

/** Strings, booleans and finite numbers other than -0: what plain JSON carries (checked inline, fast). */
function isPlainLeaf(item: unknown): boolean {
  return (
    typeof item === 'string' ||
    typeof item === 'boolean' ||
    (typeof item === 'number' && item - item === 0 && (item !== 0 || 1 / item > 0))
  );
}

/**
 * Plain objects: copied only when a property needs a tagged form. `for...in` without an own-property
 * check is the fastest walk; a plain object's prototype has no enumerable properties.
 */
function recordToJsonSafe(record: AnyRecord, depth: number): unknown {
  let out: AnyRecord | undefined;
  let escaped = false;
  for (const key in record) {
    if (key === '__proto__') throw protoKey();
    if (key === TAG) escaped = true;
    const item = record[key];
    if (isPlainLeaf(item) || typeof item === 'function' || typeof item === 'symbol') {
      if (out !== undefined && typeof item !== 'function' && typeof item !== 'symbol') out[key] = item;
      continue;
    }
    const safe = toJsonSafe(item, depth);
    if (safe !== item && out === undefined) out = copyUntil(record, key);
    if (out !== undefined) out[key] = safe;
  }
  const result = out ?? record;
  return escaped ? { $t: 'o', v: result } : result;
}

/** Class instances: always copied (own enumerable properties), so JSON.stringify does not see the class. */
function instanceToJsonSafe(instance: AnyRecord, depth: number): unknown {
  const out: AnyRecord = {};
  let escaped = false;
  for (const key of Object.keys(instance)) {
    if (key === '__proto__') throw protoKey();
    if (key === TAG) escaped = true;
    const item = instance[key];
    if (typeof item !== 'function' && typeof item !== 'symbol') out[key] = toJsonSafe(item, depth);
  }
  return escaped ? { $t: 'o', v: out } : out;
}

/** A copy of the enumerable properties of `record` that come before `stop`. */
function copyUntil(record: AnyRecord, stop: string): AnyRecord {
  const out: AnyRecord = {};
  for (const key in record) {
    if (key === stop) break;
    const item = record[key];
    if (typeof item !== 'function' && typeof item !== 'symbol') out[key] = item;
  }
  return out;
}

function protoKey(): TypeError {
  return new TypeError('json serializer refuses an object with an own "__proto__" key');
}

// ---- decoding ----------------------------------------------------------------------------------------

/** Replaces tagged objects inside a `JSON.parse` result, in place; returns the (possibly new) root. */
function revive(value: object, depth: number): unknown {
  if (depth >= MAX_JSON_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null) {
        const revived = revive(item, depth + 1);
        if (revived !== item) value[i] = revived;
      }
    }
    return value;
  }
  const record = value as AnyRecord;
  const tag = record[TAG];
  if (tag !== undefined) return reviveTagged(tag, record.v, depth);
  reviveProperties(record, depth);
  return record;
}

function reviveProperties(record: AnyRecord, depth: number): void {
  for (const key in record) {
    if (key === '__proto__') throw new TypeError('json payload has a "__proto__" key');
    const item = record[key];
    if (typeof item === 'object' && item !== null) {
      const revived = revive(item, depth + 1);
      if (revived !== item) record[key] = revived;
    }
  }
}

function reviveChild(value: unknown, depth: number): unknown {
  return typeof value === 'object' && value !== null ? revive(value, depth + 1) : value;
}

function reviveTagged(tag: unknown, payload: unknown, depth: number): unknown {
  switch (tag) {
    case 'u':
      return undefined;
    case 'f':
      return reviveSpecialNumber(payload);
    case 'n':
      if (typeof payload !== 'string' || !DECIMAL.test(payload)) throw badPayload(tag);
      return BigInt(payload);
    case 'D': {
      if (payload === null) return new Date(Number.NaN);
      // ms since 1970 as written; an ISO date string as a person types it (curl, the CLI, the dashboard)
      if (typeof payload === 'string') {
        const date = new Date(payload);
        if (Number.isNaN(date.getTime())) throw badPayload(tag);
        return date;
      }
      if (typeof payload !== 'number') throw badPayload(tag);
      return new Date(payload);
    }
    case 'M': {
      if (!Array.isArray(payload) || payload.length % 2 !== 0) throw badPayload(tag);
      const map = new Map<unknown, unknown>();
      for (let i = 0; i < payload.length; i += 2) {
        map.set(reviveChild(payload[i], depth), reviveChild(payload[i + 1], depth));
      }
      return map;
    }
    case 'S': {
      if (!Array.isArray(payload)) throw badPayload(tag);
      const set = new Set<unknown>();
      for (const item of payload) set.add(reviveChild(item, depth));
      return set;
    }
    case 'B':
      if (typeof payload !== 'string') throw badPayload(tag);
      return Buffer.from(payload, 'base64');
    case 'T':
      return reviveTypedArray(payload);
    case 'o':
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw badPayload(tag);
      reviveProperties(payload as AnyRecord, depth);
      return payload;
    default:
      throw new TypeError(`json payload has an unknown tag ${JSON.stringify(tag)}`);
  }
}

function reviveSpecialNumber(payload: unknown): number {
  switch (payload) {
    case 'NaN':
      return Number.NaN;
    case 'Infinity':
      return Number.POSITIVE_INFINITY;
    case '-Infinity':
      return Number.NEGATIVE_INFINITY;
    case '-0':
      return -0;
    default:
      throw badPayload('f');
  }
}

function reviveTypedArray(payload: unknown): ArrayBufferView {
  if (!Array.isArray(payload) || payload.length !== 2) throw badPayload('T');
  const [name, base64] = payload as unknown[];
  if (typeof name !== 'string' || typeof base64 !== 'string' || !Object.hasOwn(TYPED_ARRAYS, name)) {
    throw badPayload('T');
  }
  const bytes = Buffer.from(base64, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  // throws a RangeError when the byte count is not a multiple of the element size
  return new TYPED_ARRAYS[name as TypedArrayName](copy.buffer);
}

function badPayload(tag: string): TypeError {
  return new TypeError(`json payload has a malformed "${tag}" tagged value`);
}

function tooDeep(): RangeError {
  return new RangeError(`json value nested deeper than ${MAX_JSON_DEPTH} levels (or cyclic)`);
}
