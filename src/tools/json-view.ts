/**
 * Values as the command line and the dashboard print and read them: the `json` serializer's tagged
 * JSON (src/serialization/json.ts), the same dialect the HTTP entry and the gateway speak, so a value
 * can be copied from any of them into any other (docs/json.md):
 *
 * | value                                  | printed as                                        |
 * | -------------------------------------- | ------------------------------------------------- |
 * | `undefined` (e.g. a `void` method)     | `{"$t":"u"}`                                      |
 * | `NaN`, `Infinity`, `-Infinity`, `-0`   | `{"$t":"f","v":"NaN"}`                            |
 * | bigint                                 | `{"$t":"n","v":"12345678901234567890"}`           |
 * | `Date`                                 | `{"$t":"D","v":1714564800000}` (ms; `null` for an invalid date; read also from an ISO string) |
 * | `Map`                                  | `{"$t":"M","v":[key1, value1, key2, value2, ...]}` |
 * | `Set`                                  | `{"$t":"S","v":[...]}`                            |
 * | `Buffer`                               | `{"$t":"B","v":"<base64>"}`                       |
 * | other typed arrays (`Uint8Array` too)  | `{"$t":"T","v":["Float32Array","<base64 of its bytes>"]}` |
 * | an object with its own `$t` key        | `{"$t":"o","v":{...}}` (escape)                   |
 * | an `Error` (v8 serializer only)        | `{"$t":"E","v":{"name":"RangeError","message":"..."}}` (not taken by the HTTP entry) |
 * | a repeated reference (a cycle)         | `{"$t":"c"}` (printed only)                       |
 *
 * Printing follows the serializer exactly (test/cli/json-view.test.ts checks it against the
 * serializer's own output): functions and symbols are dropped from objects and are `null` in arrays,
 * class instances print as their `toJSON()` or own enumerable properties. Reading says where a value is
 * wrong (`[1].when: "D" expects ms since 1970 or an ISO date string`); an object with an own
 * `__proto__` key is refused.
 */

import { TYPED_ARRAYS, type TypedArrayName } from '../internal.js';

/** The tag key of the dialect. */
const TAG = '$t';

/** Nesting deeper than this is refused (printing and reading). */
export const MAX_VIEW_DEPTH = 1000;

type Plain = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function specialNumber(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (value === 0 && 1 / value < 0) return '-0';
  return undefined;
}

const skipped = (item: unknown): boolean => typeof item === 'function' || typeof item === 'symbol';

/** `value` as JSON-safe data, in the tagged dialect. */
export function toView(value: unknown): unknown {
  return viewOf(value, 0, new Set());
}

function viewOf(value: unknown, depth: number, path: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number': {
      const special = specialNumber(value);
      return special === undefined ? value : { $t: 'f', v: special };
    }
    case 'bigint':
      return { $t: 'n', v: value.toString() };
    case 'undefined':
    case 'function':
    case 'symbol':
      return { $t: 'u' };
    default:
      break;
  }
  if (value === null) return null;
  const object = value as object;
  if (depth >= MAX_VIEW_DEPTH) throw new RangeError(`nested deeper than ${MAX_VIEW_DEPTH} levels`);
  if (path.has(object)) return { $t: 'c' };
  path.add(object);
  try {
    const next = (item: unknown) => viewOf(item, depth + 1, path);
    if (Array.isArray(object)) return object.map((item) => (skipped(item) ? null : next(item)));
    if (object instanceof Date) {
      const time = object.getTime();
      return { $t: 'D', v: Number.isNaN(time) ? null : time };
    }
    if (object instanceof Map) return { $t: 'M', v: [...object].flatMap(([k, v]) => [next(k), next(v)]) };
    if (object instanceof Set) return { $t: 'S', v: [...object].map(next) };
    if (ArrayBuffer.isView(object)) {
      const bytes = Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString('base64');
      if (Buffer.isBuffer(object)) return { $t: 'B', v: bytes };
      return { $t: 'T', v: [object.constructor.name, bytes] };
    }
    if (object instanceof Error) return { $t: 'E', v: { name: object.name, message: object.message } };
    const ctor = object.constructor;
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (ctor !== Object && ctor !== undefined && typeof toJSON === 'function') {
      return next(toJSON.call(object));
    }
    const out: Plain = {};
    for (const [key, item] of Object.entries(object)) {
      if (skipped(item)) continue;
      Object.defineProperty(out, key, { value: next(item), enumerable: true, writable: true });
    }
    return Object.hasOwn(out, TAG) ? { $t: 'o', v: out } : out;
  } finally {
    path.delete(object);
  }
}

/** What is wrong with a value given to `fromView`, with where (`[1].when`). */
export class ViewError extends Error {
  override name = 'ViewError';
}

/** Reads data printed by `toView`, answered by the HTTP entry, or written by hand back into values. */
export function fromView(data: unknown): unknown {
  return readValue(data, 0, '');
}

function readValue(data: unknown, depth: number, at: string): unknown {
  if (depth >= MAX_VIEW_DEPTH) throw new ViewError(`nested deeper than ${MAX_VIEW_DEPTH} levels`);
  if (Array.isArray(data)) return data.map((item, i) => readValue(item, depth + 1, `${at}[${i}]`));
  if (!isPlainObject(data)) return data;
  if (Object.hasOwn(data, '__proto__')) throw new ViewError(`${at || 'the value'} has a __proto__ key`);
  if (Object.hasOwn(data, TAG)) return tagged(data, depth, at);
  return readProperties(data, depth, at);
}

function readProperties(data: Plain, depth: number, at: string): Plain {
  const out: Plain = {};
  for (const [key, item] of Object.entries(data)) out[key] = readValue(item, depth + 1, `${at}.${key}`);
  return out;
}

const NUMBERS: Readonly<Record<string, number>> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  '-Infinity': Number.NEGATIVE_INFINITY,
  '-0': -0,
};

function tagged(data: Plain, depth: number, at: string): unknown {
  const tag = data[TAG];
  const payload = data['v'];
  const where = at || 'the value';
  const bad = (expected: string) => new ViewError(`${where}: "${String(tag)}" expects ${expected}`);
  const inner = (item: unknown, suffix: string) => readValue(item, depth + 1, `${at}${suffix}`);
  switch (tag) {
    case 'u':
      return undefined;
    case 'f':
      if (typeof payload !== 'string' || !Object.hasOwn(NUMBERS, payload))
        throw bad('"v": "NaN", "Infinity", "-Infinity" or "-0"');
      return NUMBERS[payload];
    case 'n':
      if (typeof payload !== 'string' || !/^-?\d+$/.test(payload))
        throw bad('"v": a string of decimal digits');
      return BigInt(payload);
    case 'D': {
      if (payload === null) return new Date(Number.NaN);
      const date = typeof payload === 'string' || typeof payload === 'number' ? new Date(payload) : undefined;
      if (date === undefined || Number.isNaN(date.getTime()))
        throw bad('"v": ms since 1970 or an ISO date string');
      return date;
    }
    case 'M': {
      if (!Array.isArray(payload) || payload.length % 2 !== 0)
        throw bad('"v": a flat list [key1, value1, key2, value2, …]');
      const map = new Map<unknown, unknown>();
      for (let i = 0; i < payload.length; i += 2)
        map.set(inner(payload[i], `[${i}]`), inner(payload[i + 1], `[${i + 1}]`));
      return map;
    }
    case 'S':
      if (!Array.isArray(payload)) throw bad('"v": a list');
      return new Set(payload.map((item, i) => inner(item, `[${i}]`)));
    case 'B':
      if (typeof payload !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(payload))
        throw bad('"v": a base64 string');
      return Buffer.from(payload, 'base64');
    case 'T':
      return typedArray(payload, bad);
    case 'o':
      if (!isPlainObject(payload)) throw bad('"v": an object');
      if (Object.hasOwn(payload, '__proto__')) throw new ViewError(`${where} has a __proto__ key`);
      return readProperties(payload, depth, at);
    case 'E': {
      if (!isPlainObject(payload)) throw bad('"v": { "name", "message" }');
      const error = new Error(String(payload['message'] ?? ''));
      error.name = String(payload['name'] ?? 'Error');
      return error;
    }
    case 'c':
      throw new ViewError(`${where}: "c" is printed for a repeated reference and cannot be given back`);
    default:
      throw new ViewError(
        `${where}: unknown tag ${JSON.stringify(tag)} (u f n D M S B T o E; an object with its own "$t" key is written {"$t":"o","v":{…}})`,
      );
  }
}

function typedArray(payload: unknown, bad: (expected: string) => ViewError): ArrayBufferView {
  const expected = `"v": [a typed array name (${Object.keys(TYPED_ARRAYS).join(', ')}), the base64 of its bytes]`;
  if (!Array.isArray(payload) || payload.length !== 2) throw bad(expected);
  const [name, base64] = payload as unknown[];
  if (typeof name !== 'string' || typeof base64 !== 'string' || !Object.hasOwn(TYPED_ARRAYS, name)) {
    throw bad(expected);
  }
  const bytes = Buffer.from(base64, 'base64');
  const type = TYPED_ARRAYS[name as TypedArrayName];
  if (bytes.byteLength % type.BYTES_PER_ELEMENT !== 0) {
    throw bad(`"v": whole ${name} elements (${type.BYTES_PER_ELEMENT} bytes each)`);
  }
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new type(copy.buffer);
}
