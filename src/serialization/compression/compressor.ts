/**
 * A compressor (extension kind `compressor`, docs/extending.md): compresses frame bodies and inflates
 * them within a bound. Registered as an instance, like a serializer; its wire `id` travels in byte 7 of
 * the frame header (docs/protocol.md#compression).
 */

/** Lowest and highest compressor ids (one byte). 0 is `deflate`, the only compression of older peers. */
export const MIN_COMPRESSOR_ID = 0;
export const MAX_COMPRESSOR_ID = 255;

export interface Compressor {
  /** The name configuration picks it by (`consumer.compressor`). */
  readonly name: string;
  /** Its wire id, 0–255: 0 deflate, 1 gzip, 2 brotli, 3 reserved for zstd; yours from 16. */
  readonly id: number;
  /** Compresses a body (synchronously: bodies are at most a frame). */
  compress(body: Uint8Array): Uint8Array;
  /**
   * Inflates a body to at most `maxBytes`: must stop there and throw an `InflateBoundError` (or any
   * error) rather than allocate more. The result is checked against the bound as well.
   */
  decompress(body: Uint8Array, maxBytes: number): Uint8Array;
}

/** A body that inflates past the bound it was given. */
export class InflateBoundError extends Error {
  override readonly name = 'InflateBoundError';
}
