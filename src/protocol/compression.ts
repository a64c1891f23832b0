/**
 * Optional body compression (frame flag bit 1): raw DEFLATE for bodies at or above a threshold. The
 * receiver inflates with an output bound, so a small frame cannot expand past the maximum frame size.
 */
import zlib from 'node:zlib';
import { ProtocolError } from './protocol-error.js';

/** Compresses `body` when compression is on and it is large enough; returns undefined otherwise. */
export function maybeCompress(body: Uint8Array, thresholdBytes: number): Buffer | undefined {
  if (thresholdBytes <= 0 || body.length < thresholdBytes) return undefined;
  const compressed = zlib.deflateRawSync(body, { level: 1 });
  return compressed.length < body.length ? compressed : undefined;
}

/** Inflates a compressed body, refusing to produce more than `maxBytes`. */
export function decompress(body: Buffer, maxBytes: number): Buffer {
  try {
    return zlib.inflateRawSync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    throw new ProtocolError(`cannot inflate a compressed body: ${(error as Error).message}`);
  }
}
