/**
 * Hessian's strings: lengths count UTF-16 code units, and each unit is written as UTF-8 on its own, so a
 * character outside the BMP is its two surrogates, three bytes each (what Java's `Hessian2Output`
 * writes; the encoding is known as CESU-8). Readers also take a four-byte UTF-8 sequence, as two units,
 * since some writers send those. Lone surrogates travel as they are, both ways.
 */

/** Bytes the UTF-16 units `text[from, to)` take. */
export function charBytes(text: string, from: number, to: number): number {
  let bytes = to - from;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x80) bytes += unit < 0x800 ? 1 : 2;
  }
  return bytes;
}

/** Writes `text[from, to)` at `out[at]` (room checked by the caller); returns the position after it. */
export function writeChars(out: Buffer, at: number, text: string, from: number, to: number): number {
  let pos = at;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      out[pos++] = unit;
    } else if (unit < 0x800) {
      out[pos++] = 0xc0 | (unit >> 6);
      out[pos++] = 0x80 | (unit & 0x3f);
    } else {
      out[pos++] = 0xe0 | (unit >> 12);
      out[pos++] = 0x80 | ((unit >> 6) & 0x3f);
      out[pos++] = 0x80 | (unit & 0x3f);
    }
  }
  return pos;
}

/** A string read from the bytes, and where it ended. */
export interface CharsRead {
  readonly text: string;
  readonly end: number;
}

/**
 * Reads `count` UTF-16 units starting at `bytes[at]`, within `bytes[.., end)`. Throws a TypeError on a
 * malformed sequence or when the bytes end first. Allocates at most 2 bytes per byte read.
 */
export function readChars(bytes: Buffer, at: number, end: number, count: number): CharsRead {
  // every unit takes at least one byte: a count beyond the bytes left is refused before anything
  if (count > end - at) throw truncatedChars(at, count, end - at);
  let ascii = true;
  for (let i = at, last = at + count; i < last; i++) {
    if (bytes[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return { text: bytes.toString('latin1', at, at + count), end: at + count };
  const units = Buffer.allocUnsafe(count * 2);
  let pos = at;
  let n = 0;
  const unit = (value: number): void => {
    units[n * 2] = value & 0xff;
    units[n * 2 + 1] = value >> 8;
    n++;
  };
  while (n < count) {
    if (pos >= end) throw truncatedChars(at, count, end - at);
    const lead = bytes[pos]!;
    if (lead < 0x80) {
      unit(lead);
      pos += 1;
    } else if ((lead & 0xe0) === 0xc0) {
      unit(((lead & 0x1f) << 6) | (continuation(bytes, pos + 1, end) & 0x3f));
      pos += 2;
    } else if ((lead & 0xf0) === 0xe0) {
      const b1 = continuation(bytes, pos + 1, end);
      const b2 = continuation(bytes, pos + 2, end);
      unit(((lead & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f));
      pos += 3;
    } else if ((lead & 0xf8) === 0xf0 && n + 2 <= count) {
      const b1 = continuation(bytes, pos + 1, end);
      const b2 = continuation(bytes, pos + 2, end);
      const b3 = continuation(bytes, pos + 3, end);
      const point =
        (((lead & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f)) - 0x10000;
      if (point < 0 || point > 0xfffff) throw badChars(pos);
      unit(0xd800 | (point >> 10));
      unit(0xdc00 | (point & 0x3ff));
      pos += 4;
    } else {
      throw badChars(pos);
    }
  }
  return { text: units.toString('utf16le', 0, count * 2), end: pos };
}

/** Skips `count` UTF-16 units starting at `bytes[at]`; returns where they end. Throws as readChars does. */
export function skipChars(bytes: Uint8Array, at: number, end: number, count: number): number {
  if (count > end - at) throw truncatedChars(at, count, end - at);
  let pos = at;
  let n = 0;
  while (n < count) {
    if (pos >= end) throw truncatedChars(at, count, end - at);
    const lead = bytes[pos]!;
    if (lead < 0x80) {
      pos += 1;
      n += 1;
    } else if ((lead & 0xe0) === 0xc0) {
      pos += 2;
      n += 1;
    } else if ((lead & 0xf0) === 0xe0) {
      pos += 3;
      n += 1;
    } else if ((lead & 0xf8) === 0xf0 && n + 2 <= count) {
      pos += 4;
      n += 2;
    } else {
      throw badChars(pos);
    }
  }
  if (pos > end) throw truncatedChars(at, count, end - at);
  return pos;
}

function continuation(bytes: Buffer, at: number, end: number): number {
  if (at >= end) throw badChars(at);
  const byte = bytes[at]!;
  if ((byte & 0xc0) !== 0x80) throw badChars(at);
  return byte;
}

function truncatedChars(at: number, count: number, left: number): TypeError {
  return new TypeError(
    `malformed hessian2: a string at byte ${at} claims ${count} characters, ${left} bytes left`,
  );
}

function badChars(at: number): TypeError {
  return new TypeError(`malformed hessian2: bad UTF-8 in a string at byte ${at}`);
}
