/**
 * The `grpc-message` trailer (gRPC over HTTP/2, "Responses"): the status message, UTF-8 and
 * percent-encoded (every byte outside printable ASCII, and `%` itself, as `%XX`). A receiver decodes
 * what it can and keeps a malformed sequence as it is: a bad message must not lose the status.
 */

/** The text of a `grpc-message` value (absent: the empty string). */
export function decodeStatusMessage(value: string | undefined): string {
  if (value === undefined || value === '') return '';
  if (!value.includes('%')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x25 && i + 2 < value.length && /^[0-9a-fA-F]{2}$/.test(value.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (code < 0x80) {
      bytes.push(code);
    } else {
      bytes.push(...Buffer.from(value[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `text` as a `grpc-message` value. */
export function encodeStatusMessage(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
