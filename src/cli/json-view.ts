/**
 * Values as the command line prints and reads them: JSON, with a tagged object for what JSON cannot say,
 * so a result prints without losing its types and can be given back as an argument:
 *
 * | value                                  | printed as                                        |
 * | -------------------------------------- | ------------------------------------------------- |
 * | `undefined` (e.g. a `void` method)     | `{"$undefined":true}`                             |
 * | `NaN`, `Infinity`, `-Infinity`, `-0`   | `{"$number":"NaN"}`                               |
 * | bigint                                 | `{"$bigint":"12345678901234567890"}`              |
 * | `Date`                                 | `{"$date":"2024-05-01T12:00:00.000Z"}` (`null` for an invalid date) |
 * | `Map`                                  | `{"$map":[[key, value], ...]}` (any key type, in order) |
 * | `Set`                                  | `{"$set":[...]}`                                  |
 * | `Buffer`, `Uint8Array`                 | `{"$bytes":"<base64>"}`                           |
 * | other typed arrays                     | `{"$typed":"Float32Array","values":[1.5, 2]}`     |
 * | an `Error` (v8 serializer)             | `{"$error":{"name":"RangeError","message":"..."}}`|
 * | an object that looks like one of these | `{"$object":{...}}` (escape)                      |
 * | a repeated reference (a cycle)         | `{"$circular":true}` (printed only)               |
 *
 * A tag is an object with exactly that one key (`$typed` with `values`); other objects, including ones
 * with other `$` keys, are plain. Arguments are read with the same tags; an object with an own
 * `__proto__` key is refused.
 */

const TAGS = new Set([
  '$undefined',
  '$number',
  '$bigint',
  '$date',
  '$map',
  '$set',
  '$bytes',
  '$error',
  '$object',
  '$circular',
]);

/** Nesting deeper than this is refused (printing and reading). */
export const MAX_VIEW_DEPTH = 1000;

const TYPED_ARRAYS = {
  Int8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
} as const;
type TypedArrayName = keyof typeof TYPED_ARRAYS;

type Plain = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a plain object would be read back as a tag (so it must be escaped). */
function looksTagged(value: Plain): boolean {
  const keys = Object.keys(value);
  if (keys.length === 1) return TAGS.has(keys[0]!);
  return keys.length === 2 && '$typed' in value && 'values' in value;
}

function specialNumber(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (value === 0 && 1 / value < 0) return '-0';
  return undefined;
}

/** `value` as JSON-safe data, with the tags above. */
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
      return special === undefined ? value : { $number: special };
    }
    case 'bigint':
      return { $bigint: value.toString() };
    case 'undefined':
      return { $undefined: true };
    case 'function':
    case 'symbol':
      return { $undefined: true };
    default:
      break;
  }
  if (value === null) return null;
  const object = value as object;
  if (depth >= MAX_VIEW_DEPTH) throw new RangeError(`nested deeper than ${MAX_VIEW_DEPTH} levels`);
  if (path.has(object)) return { $circular: true };
  path.add(object);
  try {
    const next = (item: unknown) => viewOf(item, depth + 1, path);
    if (object instanceof Date) {
      return { $date: Number.isNaN(object.getTime()) ? null : object.toISOString() };
    }
    if (object instanceof Map) return { $map: [...object].map(([k, v]) => [next(k), next(v)]) };
    if (object instanceof Set) return { $set: [...object].map(next) };
    if (object instanceof Uint8Array && object.constructor.name !== 'Uint8ClampedArray') {
      return { $bytes: Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString('base64') };
    }
    if (ArrayBuffer.isView(object) && !(object instanceof DataView)) {
      const items = [...(object as unknown as Iterable<number | bigint>)];
      return {
        $typed: object.constructor.name,
        values: items.map((item) => (typeof item === 'bigint' ? item.toString() : next(item))),
      };
    }
    if (object instanceof Error) return { $error: { name: object.name, message: object.message } };
    if (Array.isArray(object)) return object.map(next);
    const out: Plain = {};
    for (const [key, item] of Object.entries(object)) {
      Object.defineProperty(out, key, { value: next(item), enumerable: true, writable: true });
    }
    return looksTagged(out) ? { $object: out } : out;
  } finally {
    path.delete(object);
  }
}

/** What is wrong with a value given to `fromView`, with where (`[1].when`). */
export class ViewError extends Error {
  override name = 'ViewError';
}

/** Reads data printed by `toView` (or written by hand) back into values. */
export function fromView(data: unknown): unknown {
  return readValue(data, 0, '');
}

function readValue(data: unknown, depth: number, at: string): unknown {
  if (depth >= MAX_VIEW_DEPTH) throw new ViewError(`nested deeper than ${MAX_VIEW_DEPTH} levels`);
  if (Array.isArray(data)) return data.map((item, i) => readValue(item, depth + 1, `${at}[${i}]`));
  if (!isPlainObject(data)) return data;
  if (Object.hasOwn(data, '__proto__')) throw new ViewError(`${at || 'the value'} has a __proto__ key`);
  if (looksTagged(data)) return tagged(data, depth, at);
  const out: Plain = {};
  for (const [key, item] of Object.entries(data)) out[key] = readValue(item, depth + 1, `${at}.${key}`);
  return out;
}

function tagged(data: Plain, depth: number, at: string): unknown {
  const [tag] = Object.keys(data);
  const where = at || 'the value';
  const bad = (expected: string) => new ViewError(`${where}: ${tag} expects ${expected}`);
  const payload = data[tag!];
  const inner = (item: unknown, suffix: string) => readValue(item, depth + 1, `${at}${suffix}`);
  if ('$typed' in data) {
    const type = data['$typed'];
    const values = data['values'];
    if (typeof type !== 'string' || !Object.hasOwn(TYPED_ARRAYS, type) || !Array.isArray(values)) {
      throw new ViewError(
        `${where}: $typed expects a typed array name (${Object.keys(TYPED_ARRAYS).join(', ')}) and values`,
      );
    }
    const name = type as TypedArrayName;
    try {
      if (name === 'BigInt64Array' || name === 'BigUint64Array') {
        return new TYPED_ARRAYS[name](values.map((item) => BigInt(String(item))));
      }
      return new TYPED_ARRAYS[name](values.map((item) => Number(item)));
    } catch {
      throw new ViewError(`${where}: $typed ${name} values are not numbers`);
    }
  }
  switch (tag) {
    case '$undefined':
      return undefined;
    case '$number': {
      const numbers: Record<string, number> = {
        NaN: Number.NaN,
        Infinity: Number.POSITIVE_INFINITY,
        '-Infinity': Number.NEGATIVE_INFINITY,
        '-0': -0,
      };
      if (typeof payload !== 'string' || !(payload in numbers))
        throw bad('"NaN", "Infinity", "-Infinity" or "-0"');
      return numbers[payload];
    }
    case '$bigint':
      if (typeof payload !== 'string' || !/^-?\d+$/.test(payload)) throw bad('a string of decimal digits');
      return BigInt(payload);
    case '$date': {
      if (payload === null) return new Date(Number.NaN);
      const date = typeof payload === 'string' || typeof payload === 'number' ? new Date(payload) : undefined;
      if (date === undefined || Number.isNaN(date.getTime()))
        throw bad('an ISO date string or ms since 1970');
      return date;
    }
    case '$map':
      if (!Array.isArray(payload) || !payload.every((pair) => Array.isArray(pair) && pair.length === 2)) {
        throw bad('a list of [key, value] pairs');
      }
      return new Map(
        (payload as unknown[][]).map((pair, i) => [inner(pair[0], `[${i}][0]`), inner(pair[1], `[${i}][1]`)]),
      );
    case '$set':
      if (!Array.isArray(payload)) throw bad('a list');
      return new Set(payload.map((item, i) => inner(item, `[${i}]`)));
    case '$bytes':
      if (typeof payload !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(payload))
        throw bad('a base64 string');
      return Buffer.from(payload, 'base64');
    case '$error': {
      if (!isPlainObject(payload)) throw bad('{ name, message }');
      const error = new Error(String(payload['message'] ?? ''));
      error.name = String(payload['name'] ?? 'Error');
      return error;
    }
    case '$object': {
      if (!isPlainObject(payload)) throw bad('an object');
      if (Object.hasOwn(payload, '__proto__')) throw new ViewError(`${where} has a __proto__ key`);
      const out: Plain = {};
      for (const [key, item] of Object.entries(payload)) out[key] = inner(item, `.${key}`);
      return out;
    }
    default:
      throw new ViewError(`${where}: ${tag} is printed for a repeated reference and cannot be given back`);
  }
}
