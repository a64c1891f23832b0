/**
 * Protocol Buffers wire format, as the schema codec (schema-root.ts) needs it: varints (as bigints when
 * they are long or negative), 64-bit doubles, length-delimited bytes, and a reader that refuses what runs
 * past the end. Pure and synchronous.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_DELIMITED = 2;
export const WIRE_FIXED32 = 5;

/** Collects the bytes of one message. */
export class WireWriter {
  #chunks: Uint8Array[] = [];
  #bytes: number[] = [];
  #length = 0;

  #flush(): void {
    if (this.#bytes.length === 0) return;
    this.#chunks.push(Uint8Array.from(this.#bytes));
    this.#length += this.#bytes.length;
    this.#bytes = [];
  }

  tag(id: number, wire: number): void {
    this.varint(id * 8 + wire);
  }

  /** A non-negative integer up to 2^53, or any 64-bit integer as a bigint (two's complement). */
  varint(value: number | bigint): void {
    if (typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      let rest = value;
      while (rest >= 0x80) {
        this.#bytes.push((rest % 0x80) | 0x80);
        rest = Math.floor(rest / 0x80);
      }
      this.#bytes.push(rest);
      return;
    }
    let rest = BigInt.asUintN(64, BigInt(value));
    while (rest >= 0x80n) {
      this.#bytes.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.#bytes.push(Number(rest));
  }

  double(value: number): void {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    this.#bytes.push(...bytes);
  }

  delimited(bytes: Uint8Array): void {
    this.varint(bytes.length);
    this.#flush();
    this.#chunks.push(bytes);
    this.#length += bytes.length;
  }

  finish(): Uint8Array {
    this.#flush();
    const out = new Uint8Array(this.#length);
    let at = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}

/** Reads one message's bytes; throws a RangeError on malformed input. */
export class WireReader {
  pos = 0;
  constructor(
    readonly bytes: Uint8Array,
    readonly end = bytes.length,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  #fail(what: string): never {
    throw new RangeError(`malformed protobuf: ${what} at byte ${this.pos}`);
  }

  /** A varint as a bigint (the caller narrows it). */
  varint(): bigint {
    let value = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.#fail('a varint runs past the end');
      const byte = this.bytes[this.pos++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
      shift += 7n;
    }
    return this.#fail('a varint longer than 10 bytes');
  }

  /** A small varint (a tag, a length) as a number. */
  length(): number {
    const value = this.varint();
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.#fail('a length too large');
    return Number(value);
  }

  double(): number {
    if (this.pos + 8 > this.end) this.#fail('a double runs past the end');
    const value = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return value;
  }

  /** The bytes of a length-delimited value. */
  delimited(): Uint8Array {
    const length = this.length();
    if (this.pos + length > this.end) this.#fail('a length-delimited value runs past the end');
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** Skips a value of wire type `wire` (an unknown field). */
  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_FIXED64) this.pos += 8;
    else if (wire === WIRE_DELIMITED) this.delimited();
    else if (wire === WIRE_FIXED32) this.pos += 4;
    else this.#fail(`wire type ${wire}`);
    if (this.pos > this.end) this.#fail('a value runs past the end');
  }
}
