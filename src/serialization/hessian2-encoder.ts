/**
 * Writes JS values as Hessian 2.0 (the mapping is in hessian2.ts and docs/serialization.md), in the
 * compact forms Java's `Hessian2Output` writes: one-byte ints and lengths where they fit, strings and
 * binaries in chunks of 32768, class definitions written once per class and field list, type names
 * once per body and then referred to by number, and an object, list or map met again (shared or cyclic)
 * written as a reference to its first occurrence.
 */
import { MAX_DECODE_DEPTH } from './decode-limits.js';
import { charBytes, writeChars } from './hessian2-chars.js';
import { JAVA_CLASS } from './hessian2-java.js';

const CHUNK = 0x8000;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

interface ClassDef {
  readonly index: number;
  readonly fields: readonly string[];
}

/** One body's encoding: the output and the tables Hessian keeps per body. */
class Hessian2Writer {
  out = Buffer.allocUnsafe(256);
  pos = 0;
  readonly #refs = new Map<object, number>();
  readonly #types = new Map<string, number>();
  readonly #classes = new Map<string, ClassDef>();

  room(bytes: number): void {
    if (this.pos + bytes <= this.out.length) return;
    let size = this.out.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.out.copy(grown, 0, 0, this.pos);
    this.out = grown;
  }

  byte(value: number): void {
    this.room(1);
    this.out[this.pos++] = value;
  }

  value(value: unknown, depth: number): void {
    switch (typeof value) {
      case 'undefined': {
        this.byte(0x4e);
        return;
      }
      case 'boolean': {
        this.byte(value ? 0x54 : 0x46);
        return;
      }
      case 'number':
        if (Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff && !Object.is(value, -0)) {
          this.int(value);
        } else {
          this.double(value);
        }
        return;
      case 'bigint': {
        this.long(value);
        return;
      }
      case 'string': {
        this.string(value);
        return;
      }
      case 'object':
        if (value === null) {
          this.byte(0x4e);
          return;
        }
        {
          this.object(value, depth);
          return;
        }
      default:
        throw new TypeError(`hessian2 cannot carry a ${typeof value}`);
    }
  }

  int(value: number): void {
    this.room(5);
    const out = this.out;
    if (value >= -16 && value <= 47) {
      out[this.pos++] = value + 0x90;
    } else if (value >= -2048 && value <= 2047) {
      out[this.pos++] = 0xc8 + (value >> 8);
      out[this.pos++] = value & 0xff;
    } else if (value >= -262144 && value <= 262143) {
      out[this.pos++] = 0xd4 + (value >> 16);
      out[this.pos++] = (value >> 8) & 0xff;
      out[this.pos++] = value & 0xff;
    } else {
      out[this.pos++] = 0x49;
      out.writeInt32BE(value, this.pos);
      this.pos += 4;
    }
  }

  long(value: bigint): void {
    if (value < INT64_MIN || value > INT64_MAX) {
      throw new RangeError(`hessian2 carries a bigint as a Java long: ${value} is outside the 64-bit range`);
    }
    this.room(9);
    const out = this.out;
    if (value >= -8n && value <= 15n) {
      out[this.pos++] = 0xe0 + Number(value);
    } else if (value >= -2048n && value <= 2047n) {
      const n = Number(value);
      out[this.pos++] = 0xf8 + (n >> 8);
      out[this.pos++] = n & 0xff;
    } else if (value >= -262144n && value <= 262143n) {
      const n = Number(value);
      out[this.pos++] = 0x3c + (n >> 16);
      out[this.pos++] = (n >> 8) & 0xff;
      out[this.pos++] = n & 0xff;
    } else if (value >= -0x80000000n && value <= 0x7fffffffn) {
      out[this.pos++] = 0x59;
      out.writeInt32BE(Number(value), this.pos);
      this.pos += 4;
    } else {
      out[this.pos++] = 0x4c;
      out.writeBigInt64BE(value, this.pos);
      this.pos += 8;
    }
  }

  double(value: number): void {
    this.room(9);
    const out = this.out;
    if (Number.isInteger(value) && !Object.is(value, -0) && value >= -32768 && value <= 32767) {
      if (value === 0) out[this.pos++] = 0x5b;
      else if (value === 1) out[this.pos++] = 0x5c;
      else if (value >= -128 && value <= 127) {
        out[this.pos++] = 0x5d;
        out[this.pos++] = value & 0xff;
      } else {
        out[this.pos++] = 0x5e;
        out.writeInt16BE(value, this.pos);
        this.pos += 2;
      }
      return;
    }
    out[this.pos++] = 0x44;
    out.writeDoubleBE(value, this.pos);
    this.pos += 8;
  }

  string(text: string): void {
    let from = 0;
    // non-final chunks of CHUNK units, never ending between the two halves of a surrogate pair
    while (text.length - from > CHUNK) {
      let to = from + CHUNK;
      const last = text.charCodeAt(to - 1);
      if (last >= 0xd800 && last <= 0xdbff) to--;
      this.room(3);
      this.out[this.pos++] = 0x52;
      this.out.writeUInt16BE(to - from, this.pos);
      this.pos += 2;
      this.chars(text, from, to);
      from = to;
    }
    const length = text.length - from;
    this.room(3);
    if (length <= 31) {
      this.out[this.pos++] = length;
    } else if (length <= 1023) {
      this.out[this.pos++] = 0x30 + (length >> 8);
      this.out[this.pos++] = length & 0xff;
    } else {
      this.out[this.pos++] = 0x53;
      this.out.writeUInt16BE(length, this.pos);
      this.pos += 2;
    }
    this.chars(text, from, text.length);
  }

  chars(text: string, from: number, to: number): void {
    this.room(charBytes(text, from, to));
    this.pos = writeChars(this.out, this.pos, text, from, to);
  }

  binary(bytes: Uint8Array): void {
    let from = 0;
    while (bytes.length - from > CHUNK) {
      this.room(3 + CHUNK);
      this.out[this.pos++] = 0x41;
      this.out.writeUInt16BE(CHUNK, this.pos);
      this.pos += 2;
      this.out.set(bytes.subarray(from, from + CHUNK), this.pos);
      this.pos += CHUNK;
      from += CHUNK;
    }
    const length = bytes.length - from;
    this.room(3 + length);
    if (length <= 15) {
      this.out[this.pos++] = 0x20 + length;
    } else if (length <= 1023) {
      this.out[this.pos++] = 0x34 + (length >> 8);
      this.out[this.pos++] = length & 0xff;
    } else {
      this.out[this.pos++] = 0x42;
      this.out.writeUInt16BE(length, this.pos);
      this.pos += 2;
    }
    this.out.set(bytes.subarray(from), this.pos);
    this.pos += length;
  }

  date(date: Date): void {
    const time = date.getTime();
    if (Number.isNaN(time)) throw new TypeError('hessian2 cannot carry an invalid Date');
    this.room(9);
    if (time % 60000 === 0 && Math.abs(time / 60000) < 0x7fffffff) {
      this.out[this.pos++] = 0x4b;
      this.out.writeInt32BE(time / 60000, this.pos);
      this.pos += 4;
    } else {
      this.out[this.pos++] = 0x4a;
      this.out.writeBigInt64BE(BigInt(time), this.pos);
      this.pos += 8;
    }
  }

  /** Writes the type `name` (a string the first time in this body, then its number). */
  type(name: string): void {
    const known = this.#types.get(name);
    if (known !== undefined) {
      this.int(known);
      return;
    }
    this.#types.set(name, this.#types.size);
    this.string(name);
  }

  object(value: object, depth: number): void {
    const ref = this.#refs.get(value);
    if (ref !== undefined) {
      this.byte(0x51);
      this.int(ref);
      return;
    }
    if (value instanceof Date) {
      this.date(value);
      return;
    }
    if (value instanceof Uint8Array) {
      this.binary(value);
      return;
    }
    if (value instanceof ArrayBuffer) {
      this.binary(new Uint8Array(value));
      return;
    }
    if (depth >= MAX_DECODE_DEPTH) {
      throw new RangeError(`hessian2 value nested deeper than ${MAX_DECODE_DEPTH} levels`);
    }
    const className = (value as { [JAVA_CLASS]?: unknown })[JAVA_CLASS];
    const type = typeof className === 'string' ? className : undefined;
    if (Array.isArray(value)) {
      this.#refs.set(value, this.#refs.size);
      this.list(value, type, depth + 1);
      return;
    }
    if (value instanceof Map) {
      this.#refs.set(value, this.#refs.size);
      this.map(value, type, depth + 1);
      return;
    }
    refuseObject(value);
    this.#refs.set(value, this.#refs.size);
    if (type !== undefined) {
      this.instance(value as Record<string, unknown>, type, depth + 1);
      return;
    }
    this.byte(0x48);
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      this.string(key);
      this.value(record[key], depth + 1);
    }
    this.byte(0x5a);
  }

  list(items: readonly unknown[], type: string | undefined, depth: number): void {
    const length = items.length;
    if (type === undefined) {
      if (length <= 7) this.byte(0x78 + length);
      else {
        this.byte(0x58);
        this.int(length);
      }
    } else if (length <= 7) {
      this.byte(0x70 + length);
      this.type(type);
    } else {
      this.byte(0x56);
      this.type(type);
      this.int(length);
    }
    for (let i = 0; i < length; i++) this.value(items[i], depth);
  }

  map(map: ReadonlyMap<unknown, unknown>, type: string | undefined, depth: number): void {
    if (type === undefined) this.byte(0x48);
    else {
      this.byte(0x4d);
      this.type(type);
    }
    for (const [key, item] of map) {
      this.value(key, depth);
      this.value(item, depth);
    }
    this.byte(0x5a);
  }

  instance(record: Record<string, unknown>, className: string, depth: number): void {
    const fields = Object.keys(record);
    const key = `${className}\u0000${fields.join('\u0000')}`;
    let def = this.#classes.get(key);
    if (def === undefined) {
      def = { index: this.#classes.size, fields };
      this.#classes.set(key, def);
      this.byte(0x43);
      this.string(className);
      this.int(fields.length);
      for (const field of fields) this.string(field);
    }
    if (def.index <= 15) this.byte(0x60 + def.index);
    else {
      this.byte(0x4f);
      this.int(def.index);
    }
    for (const field of def.fields) this.value(record[field], depth);
  }
}

/** Throws a TypeError naming what hessian2 cannot carry (and what to send instead, when there is a way). */
function refuseObject(value: object): void {
  if (ArrayBuffer.isView(value)) {
    throw new TypeError(
      `hessian2 carries bytes as a Buffer or Uint8Array, not a ${value.constructor.name}; send an array of numbers (withJavaClass('[int', [...]) for an int[])`,
    );
  }
  if (value instanceof Set) {
    throw new TypeError(
      "hessian2 cannot carry a Set; send an array (withJavaClass('java.util.HashSet', [...values]) for a Java Set)",
    );
  }
  if (
    value instanceof RegExp ||
    value instanceof Error ||
    typeof (value as { then?: unknown }).then === 'function'
  ) {
    throw new TypeError(`hessian2 cannot carry a ${value.constructor.name}`);
  }
}

/** Encodes one value as a Hessian 2.0 body. */
export function encodeHessian2(value: unknown): Uint8Array {
  const writer = new Hessian2Writer();
  writer.value(value, 0);
  return writer.out.subarray(0, writer.pos);
}
