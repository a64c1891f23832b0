/**
 * What decoding one body may cost. Every value a body decodes into (a number, a string, a container)
 * is one *element* (msgpack counts a byte array as 2 and an extension value such as a Date or a typed
 * array as 3); an element costs the receiver at most about 100 bytes of heap and a microsecond (measured
 * worst cases in docs/operations.md). A body may hold at most `maxElements` elements, and no more
 * elements than it has bytes (msgpack and json spend at least that many bytes on them), so decoding
 * costs a bounded multiple of the bytes that carry it.
 *
 * Serializers that can count their elements without decoding implement `Serializer.measure` (msgpack
 * and json do: a cheap structural scan, run only on bodies larger than {@link MEASURE_ABOVE_BYTES}).
 * For the others the decoded value is walked afterwards by {@link checkDecoded}.
 */
import type { Serializer } from './serializer.js';

/** Limits applied to every body a side decodes (requests on a provider, answers on a consumer). */
export interface DecodeLimits {
  /** Elements one body may decode into. Default 1,000,000. */
  readonly maxElements: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = { maxElements: 1_000_000 };

/** Containers nested deeper than this are refused by the scanners and by {@link checkDecoded}. */
export const MAX_DECODE_DEPTH = 1000;

/**
 * Bodies up to this size are not scanned: they cannot hold more elements than bytes, nor nest deeper
 * than their length allows, so the limits hold without looking (except for serializers that set
 * `measureEveryBody`, such as protobuf).
 */
export const MEASURE_ABOVE_BYTES = 512;

/** A body that would decode past a limit. The call is refused with `Serialization`. */
export class DecodeLimitError extends Error {
  override readonly name = 'DecodeLimitError';
}

export function tooManyElements(bytes: number | undefined, limit: number): DecodeLimitError {
  const body = bytes === undefined ? 'a body' : `a body of ${bytes} bytes`;
  return new DecodeLimitError(`${body} holds more than ${limit} elements (maxDecodedElements)`);
}

export function tooDeep(): DecodeLimitError {
  return new DecodeLimitError(`a body nests containers deeper than ${MAX_DECODE_DEPTH} levels`);
}

/**
 * How many elements `bytes` may decode into, checked against `limits` before decoding: bodies above
 * {@link MEASURE_ABOVE_BYTES} (or above the element cap) are measured by the serializer; smaller ones
 * count their length, an upper bound. A serializer that cannot measure is charged its length too, and
 * its result is walked by {@link decodeBody}. Throws DecodeLimitError.
 */
export function measureBody(serializer: Serializer, bytes: Uint8Array, limits: DecodeLimits): number {
  const length = bytes.length;
  if (serializer.measure === undefined) return length;
  if (length <= MEASURE_ABOVE_BYTES && length <= limits.maxElements && serializer.measureEveryBody !== true) {
    return length;
  }
  return serializer.measure(bytes, limits.maxElements);
}

/** Decodes a body `measureBody` accepted; the result of a serializer that cannot measure is walked. */
export function decodeBody(serializer: Serializer, bytes: Uint8Array, limits: DecodeLimits): unknown {
  const value = serializer.decode(bytes);
  if (serializer.measure === undefined) checkDecoded(value, limits);
  return value;
}

/**
 * Walks a decoded value (for serializers without `measure`, such as v8): refuses more than
 * `maxElements` elements, nesting beyond {@link MAX_DECODE_DEPTH}, and any object with an own
 * `__proto__` key, so that no such key reaches a handler through any serializer. Iterative: a deep
 * value cannot overflow the stack. Cycles are cut by the element count.
 */
export function checkDecoded(value: unknown, limits: DecodeLimits): void {
  if (typeof value !== 'object' || value === null) return;
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  let elements = 1;
  const visit = (child: unknown, depth: number): void => {
    if (++elements > limits.maxElements) throw tooManyElements(undefined, limits.maxElements);
    if (typeof child === 'object' && child !== null) {
      if (depth > MAX_DECODE_DEPTH) throw tooDeep();
      stack.push(child);
      depths.push(depth);
    }
  };
  while (stack.length > 0) {
    const item = stack.pop() as object;
    const depth = depths.pop()! + 1;
    if (Array.isArray(item)) {
      for (const child of item) visit(child, depth);
    } else if (item instanceof Map) {
      for (const [key, child] of item) {
        visit(key, depth);
        visit(child, depth);
      }
    } else if (item instanceof Set) {
      for (const child of item) visit(child, depth);
    } else if (ArrayBuffer.isView(item) || item instanceof ArrayBuffer || item instanceof Date) {
      // leaves
    } else {
      if (Object.hasOwn(item, '__proto__')) {
        throw new DecodeLimitError('a decoded object has an own "__proto__" key');
      }
      for (const key of Object.keys(item)) visit((item as Record<string, unknown>)[key], depth);
    }
  }
}
