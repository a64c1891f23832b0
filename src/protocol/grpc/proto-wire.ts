/**
 * The few Protocol Buffers wire pieces gRPC's own messages need (google.rpc.Status, the health and
 * reflection services' messages), written by hand so that the entry needs no protobuf library and no
 * `.proto` of its own: a writer of varint, length-delimited and nested fields, and a reader that walks
 * a message's fields. Field numbers and types are the callers'.
 */

/** Builds one message, field by field, in the order written. */
export class ProtoWriter {
  readonly #parts: Buffer[] = [];
  #length = 0;

  #push(bytes: Buffer): void {
    this.#parts.push(bytes);
    this.#length += bytes.length;
  }

  #varint(value: number): void {
    const bytes: number[] = [];
    let rest = value;
    while (rest > 0x7f) {
      bytes.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    bytes.push(rest);
    this.#push(Buffer.from(bytes));
  }

  /** A varint field (int32, enum, bool); 0 is written too (proto3 would leave it out; readers accept both). */
  uint(field: number, value: number): this {
    this.#varint((field << 3) | 0);
    this.#varint(value);
    return this;
  }

  /** A length-delimited field: bytes, a string, or an encoded message. */
  bytes(field: number, value: Uint8Array | string): this {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
    this.#varint((field << 3) | 2);
    this.#varint(bytes.length);
    this.#push(bytes);
    return this;
  }

  finish(): Buffer {
    return Buffer.concat(this.#parts, this.#length);
  }
}

/** One field as read: its number, wire type, and its varint value or its bytes. */
export interface ProtoField {
  readonly field: number;
  readonly wireType: number;
  readonly value: number;
  readonly bytes: Buffer;
}

const EMPTY = Buffer.alloc(0);

/** The fields of `message`, in order; throws on a malformed message. */
export function readProtoFields(message: Uint8Array): ProtoField[] {
  const buffer = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  const fields: ProtoField[] = [];
  let at = 0;
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= buffer.length) throw new Error('truncated varint');
      const byte = buffer[at++]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 0x80;
    }
    throw new Error('varint too long');
  };
  while (at < buffer.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (wireType === 0) fields.push({ field, wireType, value: varint(), bytes: EMPTY });
    else if (wireType === 2) {
      const length = varint();
      if (at + length > buffer.length) throw new Error('truncated field');
      fields.push({ field, wireType, value: length, bytes: buffer.subarray(at, at + length) });
      at += length;
    } else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (at > buffer.length) throw new Error('truncated field');
  }
  return fields;
}

/** The string of field `field` (the last one written), or '' when absent. */
export function stringField(fields: readonly ProtoField[], field: number): string {
  let found = '';
  for (const f of fields) if (f.field === field && f.wireType === 2) found = f.bytes.toString('utf8');
  return found;
}
