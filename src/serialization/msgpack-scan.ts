/**
 * A structural pre-scan of MessagePack bytes: walks the headers without building anything and returns
 * how many values (elements) decoding would create, or throws before msgpackr allocates a thing:
 * more elements than `maxElements`, containers nested deeper than {@link MAX_DECODE_DEPTH}, a length
 * that runs past the end, trailing bytes, or an extension Callisto's msgpack never writes (records,
 * bundled strings, structured-clone references, unknown types).
 *
 * Extensions follow msgpackr's conventions: `undefined` (type 0), Date (-1), bigint (0x42) and typed
 * arrays (0x74) carry their data inside the extension; Error (0x65), Set (0x73) and RegExp (0x78) are
 * followed by the one value they are built from, and so is Callisto's Map extension (0x4d, as fixext 1).
 *
 * Byte arrays and extensions weigh more than one element: they become objects (a Buffer, a Date, a
 * typed array) of up to ~200 bytes of heap each, from as little as 2 or 3 bytes. A byte array counts 2
 * elements and an extension 3 — its minimum size on the wire, so a body still never counts more
 * elements than it has bytes — which keeps every counted element under ~100 bytes of heap.
 *
 * Iterative, allocation-free (the stack of open containers is a preallocated array) and linear in the
 * number of elements: a string or byte array is skipped by its length, whatever its size.
 */
import { DecodeLimitError, MAX_DECODE_DEPTH, tooDeep, tooManyElements } from './decode-limits.js';

/** Extension types that carry their own data and read nothing after it. */
const DATA_EXTENSIONS = new Set([0x00, 0xff, 0x42, 0x74]);
/** Built-in extension types that are followed by one value, whatever the extension's size. */
const FOLLOWED_EXTENSIONS = new Set([0x65, 0x73, 0x78]);

export interface MsgpackScanner {
  /** Elements `bytes` decodes into; throws DecodeLimitError when over a limit or malformed. */
  scan(bytes: Uint8Array, maxElements: number): number;
}

/**
 * Creates a scanner. `followedFixext1` are the types of extensions registered with a `read` function
 * (msgpackr writes them as fixext 1 followed by the value they are read from), such as Callisto's Map;
 * `data` the types of extensions registered with `pack`/`unpack`, which carry their data and read
 * nothing after it (Callisto's large byte arrays).
 */
export function createMsgpackScanner(
  followedFixext1: readonly number[],
  data: readonly number[] = [],
): MsgpackScanner {
  const readFollows = new Set(followedFixext1);
  const ownData = new Set(data);
  /** Values read after an extension of `type` that is not fixext 1 (0 or 1); throws for types never accepted. */
  const extensionFollows = (type: number): number => (ownData.has(type) ? 0 : builtinFollows(type));
  // remaining values of each open container; map32 lengths reach 2^33, beyond an Int32Array
  const stack = new Float64Array(MAX_DECODE_DEPTH + 1);

  const truncated = (at: number): DecodeLimitError =>
    new DecodeLimitError(`malformed msgpack: a length at byte ${at} runs past the end`);

  return {
    scan(bytes, maxElements) {
      const end = bytes.length;
      let pos = 0;
      let elements = 0;
      let depth = 0;
      let remaining = 1;
      for (;;) {
        if (remaining === 0) {
          if (depth === 0) break;
          remaining = stack[--depth]!;
          continue;
        }
        remaining--;
        if (pos >= end) throw truncated(pos);
        const token = bytes[pos++]!;
        // one element, two for a byte array, three for an extension (their minimum size in bytes)
        elements +=
          token === 0xc4 || token === 0xc5 || token === 0xc6
            ? 2
            : (token >= 0xc7 && token <= 0xc9) || (token >= 0xd4 && token <= 0xd8)
              ? 3
              : 1;
        if (elements > maxElements) throw tooManyElements(end, maxElements);
        let children = 0;
        if (token < 0x80 || token >= 0xe0) {
          // positive or negative fixint
        } else if (token < 0x90) {
          children = (token & 0x0f) * 2;
        } else if (token < 0xa0) {
          children = token & 0x0f;
        } else if (token < 0xc0) {
          pos += token & 0x1f;
        } else {
          switch (token) {
            case 0xc0:
            case 0xc2:
            case 0xc3:
              break;
            case 0xc4: // bin 8
            case 0xd9: // str 8
              if (pos + 1 > end) throw truncated(pos);
              pos += 1 + bytes[pos]!;
              break;
            case 0xc5: // bin 16
            case 0xda: // str 16
              if (pos + 2 > end) throw truncated(pos);
              pos += 2 + ((bytes[pos]! << 8) | bytes[pos + 1]!);
              break;
            case 0xc6: // bin 32
            case 0xdb: // str 32
              if (pos + 4 > end) throw truncated(pos);
              pos += 4 + u32(bytes, pos);
              break;
            case 0xca:
            case 0xce:
            case 0xd2:
              pos += 4;
              break;
            case 0xcb:
            case 0xcf:
            case 0xd3:
              pos += 8;
              break;
            case 0xcc:
            case 0xd0:
              pos += 1;
              break;
            case 0xcd:
            case 0xd1:
              pos += 2;
              break;
            case 0xdc: // array 16
              if (pos + 2 > end) throw truncated(pos);
              children = (bytes[pos]! << 8) | bytes[pos + 1]!;
              pos += 2;
              break;
            case 0xdd: // array 32
              if (pos + 4 > end) throw truncated(pos);
              children = u32(bytes, pos);
              pos += 4;
              break;
            case 0xde: // map 16
              if (pos + 2 > end) throw truncated(pos);
              children = ((bytes[pos]! << 8) | bytes[pos + 1]!) * 2;
              pos += 2;
              break;
            case 0xdf: // map 32
              if (pos + 4 > end) throw truncated(pos);
              children = u32(bytes, pos) * 2;
              pos += 4;
              break;
            case 0xd4: {
              // fixext 1: type, one data byte
              if (pos + 2 > end) throw truncated(pos);
              const type = bytes[pos]!;
              pos += 2;
              if (FOLLOWED_EXTENSIONS.has(type) || readFollows.has(type)) children = 1;
              else if (!DATA_EXTENSIONS.has(type) && !ownData.has(type)) throw unsupportedExtension(type);
              break;
            }
            case 0xd5:
            case 0xd6:
            case 0xd7:
            case 0xd8:
              // fixext 2, 4, 8, 16
              if (pos + 1 > end) throw truncated(pos);
              children = extensionFollows(bytes[pos]!);
              pos += 1 + (1 << (token - 0xd4));
              break;
            case 0xc7:
            case 0xc8:
            case 0xc9: {
              // ext 8, 16, 32: length, type, data
              const size = token === 0xc7 ? 1 : token === 0xc8 ? 2 : 4;
              if (pos + size + 1 > end) throw truncated(pos);
              const length =
                size === 1
                  ? bytes[pos]!
                  : size === 2
                    ? (bytes[pos]! << 8) | bytes[pos + 1]!
                    : u32(bytes, pos);
              children = extensionFollows(bytes[pos + size]!);
              pos += size + 1 + length;
              break;
            }
            default:
              throw new DecodeLimitError(`malformed msgpack: byte 0x${token.toString(16)} at ${pos - 1}`);
          }
        }
        if (pos > end) throw truncated(pos);
        if (children > 0) {
          // every value takes at least one byte: a count beyond what is left can never be satisfied
          if (children > end - pos) throw truncated(pos);
          if (depth >= MAX_DECODE_DEPTH) throw tooDeep();
          stack[depth++] = remaining;
          remaining = children;
        }
      }
      if (pos !== end) throw new DecodeLimitError(`malformed msgpack: ${end - pos} bytes after the value`);
      return elements;
    },
  };
}

/** Values read after a built-in extension of `type` (0 or 1); throws for types never accepted. */
function builtinFollows(type: number): number {
  if (FOLLOWED_EXTENSIONS.has(type)) return 1;
  if (DATA_EXTENSIONS.has(type)) return 0;
  throw unsupportedExtension(type);
}

function unsupportedExtension(type: number): DecodeLimitError {
  return new DecodeLimitError(`msgpack extension type ${type} is not accepted`);
}

function u32(bytes: Uint8Array, at: number): number {
  return bytes[at]! * 0x1000000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
}
