/**
 * Reads Hessian 2.0 bodies into JS values (the mapping is in hessian2.ts and docs/serialization.md).
 * Every production of the Hessian 2.0 grammar is read, in every form Java's `Hessian2Output` (and
 * Dubbo's hessian-lite) writes: compact and chunked strings and binaries, fixed and variable lists,
 * typed and untyped maps, class definitions and their instances, the type and reference tables.
 *
 * Bounded by construction, before the scan (hessian2-scan.ts) has even counted anything: every length
 * is checked against the bytes left before it is used, nothing is allocated from a claimed length (a
 * string allocates at most 2 bytes per byte it reads), references and class or type numbers are checked
 * against their tables, nesting deeper than MAX_DECODE_DEPTH throws, and no object gets an own
 * `__proto__` key (a map with such a key is a `Map`, a class with such a field is refused).
 */
import { MAX_DECODE_DEPTH, tooDeep } from './decode-limits.js';
import { readChars } from './hessian2-chars.js';
import { JAVA_CLASS } from './hessian2-java.js';

/**
 * The classes Caucho's Hessian writes a boxed `Short`, `Byte` or `Float` as, where Java's type is
 * `Object` (one field, `_value`): decoded as the number they hold.
 */
const NUMBER_HANDLES = new Set([
  'com.caucho.hessian.io.ShortHandle',
  'com.caucho.hessian.io.ByteHandle',
  'com.caucho.hessian.io.FloatHandle',
]);

/** Dates a JS Date holds: ±8.64e15 ms around 1970. */
const MAX_DATE_MS = 8.64e15;

interface ClassDef {
  readonly name: string;
  readonly fields: readonly string[];
}

class Hessian2Reader {
  pos = 0;
  readonly end: number;
  readonly #bytes: Buffer;
  readonly #refs: unknown[] = [];
  readonly #types: string[] = [];
  readonly #classes: ClassDef[] = [];
  /** Slots of untyped maps still being read, and those referred to while being read (made when needed). */
  #openMaps: Set<number> | undefined;
  #referencedOpen: Set<number> | undefined;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
    this.end = bytes.length;
  }

  malformed(problem: string, at = this.pos): TypeError {
    return new TypeError(`malformed hessian2: ${problem} at byte ${at}`);
  }

  next(): number {
    if (this.pos >= this.end) throw this.malformed('the body ends inside a value');
    return this.#bytes[this.pos++]!;
  }

  /** Checks that `count` bytes are left. */
  need(count: number): void {
    if (count > this.end - this.pos)
      throw this.malformed(`${count} bytes needed, ${this.end - this.pos} left`);
  }

  /** Checks a claimed count of values (each takes a byte at least) against the bytes left. */
  claim(count: number, what: string): void {
    if (count < 0 || count > this.end - this.pos) {
      throw this.malformed(`${what} claims ${count} elements, ${this.end - this.pos} bytes left`);
    }
  }

  value(depth: number): unknown {
    let at = this.pos;
    let tag = this.next();
    // class definitions ('C') precede the value they are first used by
    while (tag === 0x43) {
      this.classDef();
      at = this.pos;
      tag = this.next();
    }
    if (tag <= 0x1f) return this.chars(tag);
    if (tag >= 0x80 && tag <= 0xbf) return tag - 0x90;
    if (tag >= 0xc0 && tag <= 0xcf) return ((tag - 0xc8) << 8) | this.next();
    if (tag >= 0xd0 && tag <= 0xd7) return this.int3(tag - 0xd4);
    if (tag >= 0xd8 && tag <= 0xef) return BigInt(tag - 0xe0);
    if (tag >= 0xf0) return BigInt(((tag - 0xf8) << 8) | this.next());
    if (tag >= 0x20 && tag <= 0x2f) return this.bytes(tag - 0x20);
    if (tag >= 0x30 && tag <= 0x33) return this.chars(((tag - 0x30) << 8) | this.next());
    if (tag >= 0x34 && tag <= 0x37) return this.bytes(((tag - 0x34) << 8) | this.next());
    if (tag >= 0x38 && tag <= 0x3f) return BigInt(this.int3(tag - 0x3c));
    if (tag >= 0x60 && tag <= 0x6f) return this.instance(tag - 0x60, depth);
    if (tag >= 0x70 && tag <= 0x77) return this.list(this.type(), tag - 0x70, depth);
    if (tag >= 0x78 && tag <= 0x7f) return this.list(undefined, tag - 0x78, depth);
    switch (tag) {
      case 0x41: // 'A', a non-final binary chunk
      case 0x42: // 'B', the final one
        return this.chunkedBytes(tag);
      case 0x44: // 'D'
        this.need(8);
        this.pos += 8;
        return this.#bytes.readDoubleBE(this.pos - 8);
      case 0x46:
        return false;
      case 0x48: // 'H', an untyped map
        return this.map(undefined, depth);
      case 0x49: // 'I'
        this.need(4);
        this.pos += 4;
        return this.#bytes.readInt32BE(this.pos - 4);
      case 0x4a: // 'J', a date in ms
        this.need(8);
        this.pos += 8;
        return this.date(Number(this.#bytes.readBigInt64BE(this.pos - 8)), at);
      case 0x4b: // 'K', a date in minutes
        this.need(4);
        this.pos += 4;
        return this.date(this.#bytes.readInt32BE(this.pos - 4) * 60000, at);
      case 0x4c: // 'L'
        this.need(8);
        this.pos += 8;
        return this.#bytes.readBigInt64BE(this.pos - 8);
      case 0x4d: // 'M', a typed map
        return this.map(this.type(), depth);
      case 0x4e:
        return null;
      case 0x4f: // 'O', an instance of a class definition
        return this.instance(this.int(), depth);
      case 0x51: // 'Q', a reference
        return this.ref(this.int());
      case 0x52: // 'R', a non-final string chunk
      case 0x53: // 'S', the final one
        return this.chunkedChars(tag);
      case 0x54:
        return true;
      case 0x55: // a typed list of unknown length
        return this.openList(this.type(), depth);
      case 0x56: // a typed list
        return this.list(this.type(), this.int(), depth);
      case 0x57: // an untyped list of unknown length
        return this.openList(undefined, depth);
      case 0x58: // an untyped list
        return this.list(undefined, this.int(), depth);
      case 0x59: // a long in 32 bits
        this.need(4);
        this.pos += 4;
        return BigInt(this.#bytes.readInt32BE(this.pos - 4));
      case 0x5b:
        return 0;
      case 0x5c:
        return 1;
      case 0x5d:
        this.need(1);
        return this.#bytes.readInt8(this.pos++);
      case 0x5e:
        this.need(2);
        this.pos += 2;
        return this.#bytes.readInt16BE(this.pos - 2);
      case 0x5f: // a double as an int of thousandths (what Caucho's Hessian2Input reads)
        this.need(4);
        this.pos += 4;
        return 0.001 * this.#bytes.readInt32BE(this.pos - 4);
      default:
        throw this.malformed(`unexpected byte 0x${tag.toString(16)}`, at);
    }
  }

  int3(high: number): number {
    this.need(2);
    const value = (high << 16) | (this.#bytes[this.pos]! << 8) | this.#bytes[this.pos + 1]!;
    this.pos += 2;
    return value;
  }

  /** An `int` production: a length, a count or a number into a table. */
  int(): number {
    const at = this.pos;
    const tag = this.next();
    if (tag >= 0x80 && tag <= 0xbf) return tag - 0x90;
    if (tag >= 0xc0 && tag <= 0xcf) return ((tag - 0xc8) << 8) | this.next();
    if (tag >= 0xd0 && tag <= 0xd7) return this.int3(tag - 0xd4);
    if (tag === 0x49) {
      this.need(4);
      this.pos += 4;
      return this.#bytes.readInt32BE(this.pos - 4);
    }
    throw this.malformed(`an int expected, byte 0x${tag.toString(16)}`, at);
  }

  /** A `string` production where only a string may stand (class and field names, types). */
  string(): string {
    const at = this.pos;
    const tag = this.next();
    if (tag <= 0x1f) return this.chars(tag);
    if (tag >= 0x30 && tag <= 0x33) return this.chars(((tag - 0x30) << 8) | this.next());
    if (tag === 0x52 || tag === 0x53) return this.chunkedChars(tag);
    throw this.malformed(`a string expected, byte 0x${tag.toString(16)}`, at);
  }

  chars(count: number): string {
    const read = readChars(this.#bytes, this.pos, this.end, count);
    this.pos = read.end;
    return read.text;
  }

  chunkedChars(first: number): string {
    let tag = first;
    let text = '';
    for (;;) {
      this.need(2);
      const count = this.#bytes.readUInt16BE(this.pos);
      this.pos += 2;
      text += this.chars(count);
      if (tag === 0x53) return text;
      // after a non-final chunk: another chunk, or a final one in any string form
      const at = this.pos;
      tag = this.next();
      if (tag === 0x52 || tag === 0x53) continue;
      if (tag <= 0x1f) return text + this.chars(tag);
      if (tag >= 0x30 && tag <= 0x33) return text + this.chars(((tag - 0x30) << 8) | this.next());
      throw this.malformed(`a string chunk expected, byte 0x${tag.toString(16)}`, at);
    }
  }

  bytes(length: number): Buffer {
    this.need(length);
    const copy = Buffer.from(this.#bytes.subarray(this.pos, this.pos + length));
    this.pos += length;
    return copy;
  }

  chunkedBytes(first: number): Buffer {
    const chunks: Buffer[] = [];
    let tag = first;
    for (;;) {
      this.need(2);
      const length = this.#bytes.readUInt16BE(this.pos);
      this.pos += 2;
      chunks.push(this.bytes(length));
      if (tag === 0x42) break;
      const at = this.pos;
      tag = this.next();
      if (tag === 0x41 || tag === 0x42) continue;
      if (tag >= 0x20 && tag <= 0x2f) chunks.push(this.bytes(tag - 0x20));
      else if (tag >= 0x34 && tag <= 0x37) chunks.push(this.bytes(((tag - 0x34) << 8) | this.next()));
      else throw this.malformed(`a binary chunk expected, byte 0x${tag.toString(16)}`, at);
      break;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  date(ms: number, at: number): Date {
    if (!(Math.abs(ms) <= MAX_DATE_MS)) {
      throw this.malformed(`a date ${ms} ms from 1970 is beyond what a JS Date holds`, at);
    }
    return new Date(ms);
  }

  /** A `type` production: a type name, new (then numbered) or by its number. */
  type(): string {
    const tag = this.#bytes[this.pos];
    if (tag !== undefined && (tag <= 0x1f || (tag >= 0x30 && tag <= 0x33) || tag === 0x52 || tag === 0x53)) {
      const name = this.string();
      this.#types.push(name);
      return name;
    }
    const at = this.pos;
    const index = this.int();
    const name = this.#types[index];
    if (name === undefined || index < 0) {
      throw this.malformed(`type #${index} refers past the ${this.#types.length} types defined`, at);
    }
    return name;
  }

  ref(index: number): unknown {
    if (index < 0 || index >= this.#refs.length) {
      throw this.malformed(`reference #${index} refers past the ${this.#refs.length} values so far`);
    }
    if (this.#openMaps?.has(index)) {
      this.#referencedOpen ??= new Set();
      this.#referencedOpen.add(index);
    }
    return this.#refs[index];
  }

  deeper(depth: number): number {
    if (depth >= MAX_DECODE_DEPTH) throw tooDeep();
    return depth + 1;
  }

  list(type: string | undefined, length: number, depth: number): unknown[] {
    const inner = this.deeper(depth);
    this.claim(length, 'a list');
    const list: unknown[] = new Array(length);
    if (type !== undefined) typed(list, type);
    this.#refs.push(list);
    for (let i = 0; i < length; i++) list[i] = this.value(inner);
    return list;
  }

  openList(type: string | undefined, depth: number): unknown[] {
    const inner = this.deeper(depth);
    const list: unknown[] = [];
    if (type !== undefined) typed(list, type);
    this.#refs.push(list);
    while (this.peek() !== 0x5a) list.push(this.value(inner));
    this.pos++;
    return list;
  }

  peek(): number {
    if (this.pos >= this.end) throw this.malformed('the body ends inside a list or map');
    return this.#bytes[this.pos]!;
  }

  /**
   * A map: a typed one (`M type`) is a `Map` carrying its type; an untyped one (`H`) is a plain object
   * when every key is a string other than `__proto__`, else a `Map`.
   */
  map(type: string | undefined, depth: number): unknown {
    const inner = this.deeper(depth);
    if (type !== undefined && type !== '') {
      const map = typed(new Map<unknown, unknown>(), type);
      this.#refs.push(map);
      while (this.peek() !== 0x5a) map.set(this.value(inner), this.value(inner));
      this.pos++;
      return map;
    }
    const slot = this.#refs.length;
    const record: Record<string, unknown> = {};
    this.#refs.push(record);
    this.#openMaps ??= new Set();
    const open = this.#openMaps;
    open.add(slot);
    const entries: unknown[] = [];
    let stringKeys = true;
    while (this.peek() !== 0x5a) {
      const key = this.value(inner);
      if (typeof key !== 'string' || key === '__proto__') stringKeys = false;
      entries.push(key, this.value(inner));
    }
    this.pos++;
    open.delete(slot);
    if (stringKeys) {
      for (let i = 0; i < entries.length; i += 2) record[entries[i] as string] = entries[i + 1];
      return record;
    }
    if (this.#referencedOpen?.has(slot)) {
      throw this.malformed('a map with keys other than strings refers to itself (not supported)');
    }
    const map = new Map<unknown, unknown>();
    for (let i = 0; i < entries.length; i += 2) map.set(entries[i], entries[i + 1]);
    this.#refs[slot] = map;
    return map;
  }

  classDef(): void {
    const at = this.pos;
    const name = this.string();
    const count = this.int();
    this.claim(count, `class ${name}`);
    const fields: string[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const field = this.string();
      if (field === '__proto__') throw this.malformed(`class ${name} has a field named __proto__`, at);
      fields[i] = field;
    }
    this.#classes.push({ name, fields });
  }

  instance(index: number, depth: number): unknown {
    const def = this.#classes[index];
    if (def === undefined || index < 0) {
      throw this.malformed(`object of class #${index}, past the ${this.#classes.length} classes defined`);
    }
    const inner = this.deeper(depth);
    const slot = this.#refs.length;
    const record = typed({} as Record<string, unknown>, def.name);
    this.#refs.push(record);
    for (const field of def.fields) record[field] = this.value(inner);
    if (NUMBER_HANDLES.has(def.name) && def.fields.length === 1 && typeof record._value === 'number') {
      this.#refs[slot] = record._value;
      return record._value;
    }
    return record;
  }
}

function typed<T extends object>(value: T, name: string): T {
  Object.defineProperty(value, JAVA_CLASS, { value: name, enumerable: false, configurable: true });
  return value;
}

/** Decodes one Hessian 2.0 body; throws a TypeError when malformed or followed by more bytes. */
export function decodeHessian2(bytes: Uint8Array): unknown {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const reader = new Hessian2Reader(buffer);
  const value = reader.value(0);
  if (reader.pos !== reader.end) {
    throw reader.malformed(`${reader.end - reader.pos} bytes after the value`);
  }
  return value;
}
