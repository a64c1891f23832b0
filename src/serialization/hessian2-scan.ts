/**
 * A structural pre-scan of a Hessian 2.0 body: walks the grammar without building anything and returns
 * how many values (elements) decoding would create, or throws a DecodeLimitError before the decoder
 * allocates a thing: more elements than `maxElements`, containers nested deeper than
 * {@link MAX_DECODE_DEPTH}, a length or count that runs past the end, a reference, type or class number
 * past its table, trailing bytes.
 *
 * What an element is here: every value is one; a binary and a date count 2 (a Buffer or a Date, ~100+
 * bytes of heap from as little as 1 byte); a field name of a class definition and a type name count 1.
 * A reference (`Q n`) counts as many elements as the list, map or object it refers to, once that one is
 * complete: a body of 300 bytes can share one list through a chain of references into a value of 2^50
 * paths, which costs nothing to decode but everything to walk (a handler, a logger, an encoder), so the
 * limit is on the value as a tree. A reference to a container still open (a cycle, as a Java object
 * graph with back pointers has) counts 1.
 *
 * Cost: linear in the bytes (strings are skipped by reading their UTF-8 lead bytes, since Hessian counts
 * their length in UTF-16 units); it keeps one number per container (for references), in a buffer
 * reused from scan to scan (bounded by the element limit, not by the input), and one per class
 * definition; nothing per other value.
 */
import { DecodeLimitError, MAX_DECODE_DEPTH, tooDeep, tooManyElements } from './decode-limits.js';
import { skipChars } from './hessian2-chars.js';

/**
 * The sizes of one scan's containers, kept for the next scan (a scan runs synchronously, one at a time):
 * it grows to the most containers a body had, at most one per element allowed (8 bytes each, 8 MB at
 * the default 1,000,000), so a stream of bodies allocates nothing per container.
 */
let sizesBuffer = new Float64Array(256);

class Hessian2Scanner {
  pos = 0;
  elements = 0;
  readonly #bytes: Uint8Array;
  readonly end: number;
  readonly #max: number;
  #types = 0;
  /** Field count of each class definition. */
  readonly #classes: number[] = [];
  /** Elements of each list, map and object, in reference order; -1 while it is still being read. */
  #sizes: Float64Array = sizesBuffer;
  #containers = 0;

  constructor(bytes: Uint8Array, maxElements: number) {
    this.#bytes = bytes;
    this.end = bytes.length;
    this.#max = maxElements;
  }

  malformed(problem: string, at = this.pos): DecodeLimitError {
    return new DecodeLimitError(`malformed hessian2: ${problem} at byte ${at}`);
  }

  count(elements: number): void {
    this.elements += elements;
    if (this.elements > this.#max) throw tooManyElements(this.end, this.#max);
  }

  next(): number {
    if (this.pos >= this.end) throw this.malformed('the body ends inside a value');
    return this.#bytes[this.pos++]!;
  }

  skip(bytes: number): void {
    if (bytes > this.end - this.pos)
      throw this.malformed(`${bytes} bytes needed, ${this.end - this.pos} left`);
    this.pos += bytes;
  }

  claim(count: number, what: string): void {
    if (count < 0 || count > this.end - this.pos) {
      throw this.malformed(`${what} claims ${count} elements, ${this.end - this.pos} bytes left`);
    }
  }

  value(depth: number): void {
    let at = this.pos;
    let tag = this.next();
    while (tag === 0x43) {
      this.classDef();
      at = this.pos;
      tag = this.next();
    }
    if (tag <= 0x1f) {
      this.chars(tag);
      return;
    }
    if (tag >= 0x80 && tag <= 0xbf) {
      this.count(1);
      return;
    }
    if ((tag >= 0xc0 && tag <= 0xcf) || tag >= 0xf0) {
      this.fixed(1);
      return;
    }
    if ((tag >= 0xd0 && tag <= 0xd7) || (tag >= 0x38 && tag <= 0x3f)) {
      this.fixed(2);
      return;
    }
    if (tag >= 0xd8 && tag <= 0xef) {
      this.count(1);
      return;
    }
    if (tag >= 0x20 && tag <= 0x2f) {
      this.binary(tag - 0x20);
      return;
    }
    if (tag >= 0x30 && tag <= 0x33) {
      this.chars(((tag - 0x30) << 8) | this.next());
      return;
    }
    if (tag >= 0x34 && tag <= 0x37) {
      this.binary(((tag - 0x34) << 8) | this.next());
      return;
    }
    if (tag >= 0x60 && tag <= 0x6f) {
      this.instance(tag - 0x60, depth, at);
      return;
    }
    if (tag >= 0x70 && tag <= 0x77) {
      this.type();
      this.list(tag - 0x70, depth);
      return;
    }
    if (tag >= 0x78 && tag <= 0x7f) {
      this.list(tag - 0x78, depth);
      return;
    }
    switch (tag) {
      case 0x41:
      case 0x42: {
        this.chunked(tag, 0x41, 0x42, true);
        return;
      }
      case 0x52:
      case 0x53: {
        this.chunked(tag, 0x52, 0x53, false);
        return;
      }
      case 0x44:
      case 0x4c: {
        this.fixed(8);
        return;
      }
      case 0x49:
      case 0x59:
      case 0x5f: {
        this.fixed(4);
        return;
      }
      case 0x4a:
        this.count(1);
        {
          this.fixed(8);
          return;
        }
      case 0x4b:
        this.count(1);
        {
          this.fixed(4);
          return;
        }
      case 0x46:
      case 0x54:
      case 0x4e:
      case 0x5b:
      case 0x5c: {
        this.count(1);
        return;
      }
      case 0x5d: {
        this.fixed(1);
        return;
      }
      case 0x5e: {
        this.fixed(2);
        return;
      }
      case 0x48: {
        this.map(depth);
        return;
      }
      case 0x4d:
        this.type();
        {
          this.map(depth);
          return;
        }
      case 0x4f: {
        this.instance(this.int(), depth, at);
        return;
      }
      case 0x51: {
        this.ref(this.int(), at);
        return;
      }
      case 0x55:
        this.type();
        {
          this.openList(depth);
          return;
        }
      case 0x56:
        this.type();
        {
          this.list(this.int(), depth);
          return;
        }
      case 0x57: {
        this.openList(depth);
        return;
      }
      case 0x58: {
        this.list(this.int(), depth);
        return;
      }
      default:
        throw this.malformed(`unexpected byte 0x${tag.toString(16)}`, at);
    }
  }

  fixed(bytes: number): void {
    this.count(1);
    this.skip(bytes);
  }

  int(): number {
    const at = this.pos;
    const tag = this.next();
    const bytes = this.#bytes;
    if (tag >= 0x80 && tag <= 0xbf) return tag - 0x90;
    if (tag >= 0xc0 && tag <= 0xcf) return ((tag - 0xc8) << 8) | this.next();
    if (tag >= 0xd0 && tag <= 0xd7) {
      this.skip(2);
      return ((tag - 0xd4) << 16) | (bytes[this.pos - 2]! << 8) | bytes[this.pos - 1]!;
    }
    if (tag === 0x49) {
      this.skip(4);
      const p = this.pos - 4;
      return (bytes[p]! << 24) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 8) | bytes[p + 3]!;
    }
    throw this.malformed(`an int expected, byte 0x${tag.toString(16)}`, at);
  }

  chars(units: number): void {
    this.count(1);
    this.pos = skipUnits(this.#bytes, this.pos, this.end, units);
  }

  binary(length: number): void {
    this.count(2);
    this.skip(length);
  }

  /** A chunked string or binary: non-final chunks, then a final chunk in any form. */
  chunked(first: number, more: number, last: number, binary: boolean): void {
    this.count(binary ? 2 : 1);
    let tag = first;
    for (;;) {
      this.skip(2);
      const length = (this.#bytes[this.pos - 2]! << 8) | this.#bytes[this.pos - 1]!;
      if (binary) this.skip(length);
      else this.pos = skipUnits(this.#bytes, this.pos, this.end, length);
      if (tag === last) return;
      const at = this.pos;
      tag = this.next();
      if (tag === more || tag === last) continue;
      let length2 = -1;
      if (binary && tag >= 0x20 && tag <= 0x2f) length2 = tag - 0x20;
      else if (binary && tag >= 0x34 && tag <= 0x37) length2 = ((tag - 0x34) << 8) | this.next();
      else if (!binary && tag <= 0x1f) length2 = tag;
      else if (!binary && tag >= 0x30 && tag <= 0x33) length2 = ((tag - 0x30) << 8) | this.next();
      if (length2 < 0) throw this.malformed(`a chunk expected, byte 0x${tag.toString(16)}`, at);
      if (binary) this.skip(length2);
      else this.pos = skipUnits(this.#bytes, this.pos, this.end, length2);
      return;
    }
  }

  /** A string where only a string may stand (class, field and type names). */
  string(): void {
    const at = this.pos;
    const tag = this.next();
    if (tag <= 0x1f) {
      this.chars(tag);
      return;
    }
    if (tag >= 0x30 && tag <= 0x33) {
      this.chars(((tag - 0x30) << 8) | this.next());
      return;
    }
    if (tag === 0x52 || tag === 0x53) {
      this.chunked(tag, 0x52, 0x53, false);
      return;
    }
    throw this.malformed(`a string expected, byte 0x${tag.toString(16)}`, at);
  }

  type(): void {
    const tag = this.#bytes[this.pos];
    if (tag !== undefined && (tag <= 0x1f || (tag >= 0x30 && tag <= 0x33) || tag === 0x52 || tag === 0x53)) {
      this.string();
      this.#types++;
      return;
    }
    const at = this.pos;
    const index = this.int();
    if (index < 0 || index >= this.#types) {
      throw this.malformed(`type #${index} refers past the ${this.#types} types defined`, at);
    }
  }

  classDef(): void {
    this.string();
    const fields = this.int();
    this.claim(fields, 'a class definition');
    for (let i = 0; i < fields; i++) this.string();
    this.#classes.push(fields);
  }

  /** Opens a list, map or object: its reference slot, nesting checked. */
  open(depth: number): number {
    if (depth >= MAX_DECODE_DEPTH) throw tooDeep();
    const start = this.elements;
    this.count(1); // containers never outnumber the elements allowed: the buffer stays within them
    if (this.#containers === this.#sizes.length) {
      const grown = new Float64Array(this.#sizes.length * 2);
      grown.set(this.#sizes);
      this.#sizes = grown;
      sizesBuffer = grown;
    }
    this.#sizes[this.#containers++] = -1;
    return start;
  }

  close(slot: number, start: number): void {
    this.#sizes[slot] = this.elements - start;
  }

  list(length: number, depth: number): void {
    const slot = this.#containers;
    const start = this.open(depth);
    this.claim(length, 'a list');
    for (let i = 0; i < length; i++) this.value(depth + 1);
    this.close(slot, start);
  }

  openList(depth: number): void {
    const slot = this.#containers;
    const start = this.open(depth);
    while (this.peek() !== 0x5a) this.value(depth + 1);
    this.pos++;
    this.close(slot, start);
  }

  map(depth: number): void {
    const slot = this.#containers;
    const start = this.open(depth);
    while (this.peek() !== 0x5a) {
      this.value(depth + 1);
      this.value(depth + 1);
    }
    this.pos++;
    this.close(slot, start);
  }

  instance(index: number, depth: number, at: number): void {
    const fields = this.#classes[index];
    if (fields === undefined || index < 0) {
      throw this.malformed(`object of class #${index}, past the ${this.#classes.length} classes defined`, at);
    }
    const slot = this.#containers;
    const start = this.open(depth);
    for (let i = 0; i < fields; i++) this.value(depth + 1);
    this.close(slot, start);
  }

  ref(index: number, at: number): void {
    if (index < 0 || index >= this.#containers) {
      throw this.malformed(`reference #${index} refers past the ${this.#containers} values so far`, at);
    }
    const size = this.#sizes[index]!;
    this.count(size < 0 ? 1 : size);
  }

  peek(): number {
    if (this.pos >= this.end) throw this.malformed('the body ends inside a list or map');
    return this.#bytes[this.pos]!;
  }
}

function skipUnits(bytes: Uint8Array, at: number, end: number, units: number): number {
  try {
    return skipChars(bytes, at, end, units);
  } catch (error) {
    throw new DecodeLimitError((error as Error).message);
  }
}

/** Elements `bytes` decodes into, counted without decoding; throws DecodeLimitError (see the file's comment). */
export function measureHessian2(bytes: Uint8Array, maxElements: number): number {
  // an empty body is no value at all (`undefined` for an answer, no arguments for a request)
  if (bytes.length === 0) return 0;
  const scanner = new Hessian2Scanner(bytes, maxElements);
  scanner.value(0);
  if (scanner.pos !== scanner.end) {
    throw scanner.malformed(`${scanner.end - scanner.pos} bytes after the value`);
  }
  return scanner.elements;
}
