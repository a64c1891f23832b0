/**
 * Optional body compression (frame flag bit 1): raw DEFLATE for bodies at or above a threshold.
 *
 * A receiver inflates only when it has compression enabled itself (`compressThresholdBytes` > 0): a
 * provider refuses compressed requests otherwise, and a consumer announces that it takes compressed
 * answers by setting flag bit 3 on its requests, so a provider never compresses an answer for a
 * consumer that did not ask. Inflating is bounded twice: by the maximum frame size, and by a ratio to
 * the compressed size (`maxInflateRatio`), so a compressed body costs at most that multiple of its bytes
 * before its elements are even counted.
 */
import zlib from 'node:zlib';
import { ProtocolError } from './protocol-error.js';

/** Default bound of inflated size / compressed size. DEFLATE level 1 (what Callisto sends) stays below 230. */
export const DEFAULT_MAX_INFLATE_RATIO = 256;

/** Compresses `body` when compression is on and it is large enough; returns undefined otherwise. */
export function maybeCompress(body: Uint8Array, thresholdBytes: number): Buffer | undefined {
  if (thresholdBytes <= 0 || body.length < thresholdBytes) return undefined;
  const compressed = zlib.deflateRawSync(body, { level: 1 });
  return compressed.length < body.length ? compressed : undefined;
}

export interface InflateLimits {
  /** Compression is enabled on this side (its `compressThresholdBytes` > 0); else compressed bodies are refused. */
  readonly enabled: boolean;
  /** Largest inflated body: the maximum frame size. */
  readonly maxBytes: number;
  /** Largest inflated size as a multiple of the compressed size. */
  readonly maxRatio: number;
}

/** Inflates a compressed body within `limits`; throws a ProtocolError naming the bound it crossed. */
export function decompress(body: Buffer, limits: InflateLimits): Buffer {
  if (!limits.enabled) {
    throw new ProtocolError('compressed bodies are not accepted here (compression is off on this side)');
  }
  const byRatio = Math.max(1, Math.floor(body.length * limits.maxRatio));
  const bound = Math.min(limits.maxBytes, byRatio);
  try {
    return zlib.inflateRawSync(body, { maxOutputLength: bound });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      const which =
        bound === byRatio && byRatio < limits.maxBytes
          ? `${limits.maxRatio} times its ${body.length} bytes (maxInflateRatio)`
          : `the maximum frame size of ${limits.maxBytes} bytes`;
      throw new ProtocolError(`a compressed body inflates past ${which}`);
    }
    throw new ProtocolError(`cannot inflate a compressed body: ${(error as Error).message}`);
  }
}
