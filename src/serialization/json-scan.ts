/**
 * A structural pre-scan of JSON text: counts the values `JSON.parse` would create without parsing, and
 * throws before it allocates anything when there are more than `maxElements` or containers nest deeper
 * than {@link MAX_DECODE_DEPTH}. For valid JSON the count is exact: the root, the first value inside
 * every non-empty container, and every value announced by a `,` or a `:` (a key and its value are two
 * values). Strings are skipped with a native search for their closing quote. Malformed text is left for
 * `JSON.parse` to refuse.
 */
import { MAX_DECODE_DEPTH, tooDeep, tooManyElements } from './decode-limits.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Values `bytes` (UTF-8 JSON) decodes into; throws DecodeLimitError over a limit. */
export function scanJson(bytes: Uint8Array, maxElements: number): number {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = buf.length;
  let elements = 1;
  let depth = 0;
  let opened = false;
  let i = 0;
  while (i < end) {
    const c = buf[i++]!;
    if (opened && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
      // the first thing after an opening bracket: a first value unless the container is empty
      opened = false;
      if (c !== 0x5d && c !== 0x7d && ++elements > maxElements) throw tooManyElements(end, maxElements);
    }
    switch (c) {
      case QUOTE:
        i = skipString(buf, i);
        break;
      case 0x5b: // [
      case 0x7b: // {
        if (++depth > MAX_DECODE_DEPTH) throw tooDeep();
        opened = true;
        break;
      case 0x5d: // ]
      case 0x7d: // }
        depth--;
        break;
      case 0x2c: // ,
      case 0x3a: // :
        if (++elements > maxElements) throw tooManyElements(end, maxElements);
        break;
      default:
        break;
    }
  }
  return elements;
}

/** Returns the index after the quote that closes the string whose content starts at `from`. */
function skipString(buf: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const quote = buf.indexOf(QUOTE, at);
    if (quote < 0) return buf.length; // unterminated: JSON.parse refuses it
    let backslashes = 0;
    for (let k = quote - 1; k >= at && buf[k] === BACKSLASH; k--) backslashes++;
    at = quote + 1;
    if (backslashes % 2 === 0) return at;
  }
}
