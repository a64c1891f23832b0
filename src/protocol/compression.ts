/**
 * Optional body compression (docs/protocol.md#compression): flag bit 1 says a body is compressed, byte 7
 * of the header names its compressor (0 deflate, what older peers always meant; the `compressor`
 * extensions, src/serialization/compression/).
 *
 * A receiver inflates only when it has compression enabled itself (`compressThresholdBytes` > 0): a
 * provider refuses compressed requests otherwise, and a consumer offers to take compressed answers by
 * setting flag bit 3 on its requests, byte 7 naming the one compressor it takes, so a provider never
 * compresses an answer with anything a consumer did not offer. Inflating is bounded twice, whatever the
 * compressor: by the maximum frame size, and by a ratio to the compressed size (`maxInflateRatio`), so a
 * compressed body costs at most that multiple of its bytes before its elements are even counted.
 */
import type { Compressor } from '../serialization/compression/compressor.js';
import { InflateBoundError } from '../serialization/compression/compressor.js';
import {
  BUILTIN_COMPRESSOR_TABLE,
  type CompressorTable,
} from '../serialization/compression/compressor-table.js';
import { type Frame, FrameFlag } from './frame.js';
import { ProtocolError } from './protocol-error.js';

/** Default bound of inflated size / compressed size. DEFLATE level 1 (what Callisto sends) stays below 230. */
export const DEFAULT_MAX_INFLATE_RATIO = 256;

/** No compression: what `bodyCompression()` and `answerCompression()` say for a frame without it. */
export const UNCOMPRESSED = -1;

/** The compressor id of a frame's body, or UNCOMPRESSED. */
export function bodyCompression(frame: Frame): number {
  return (frame.flags & FrameFlag.Compressed) === 0 ? UNCOMPRESSED : frame.compressor;
}

/** On a request: the compressor id its caller takes answers in, or UNCOMPRESSED. */
export function answerCompression(frame: Frame): number {
  return (frame.flags & FrameFlag.AcceptsCompressed) === 0 ? UNCOMPRESSED : frame.compressor;
}

/**
 * Compresses `body` with `compressor` when compression is on and the body large enough; undefined
 * otherwise, and when compressing does not pay or would exceed `maxRatio` (a receiver with the same
 * `maxInflateRatio` would refuse it: such a body goes uncompressed).
 */
export function maybeCompress(
  body: Uint8Array,
  thresholdBytes: number,
  compressor: Compressor,
  maxRatio: number = DEFAULT_MAX_INFLATE_RATIO,
): Uint8Array | undefined {
  if (thresholdBytes <= 0 || body.length < thresholdBytes) return undefined;
  const compressed = compressor.compress(body);
  if (compressed.length >= body.length || body.length > compressed.length * maxRatio) return undefined;
  return compressed;
}

export interface InflateLimits {
  /** Compression is enabled on this side (its `compressThresholdBytes` > 0); else compressed bodies are refused. */
  readonly enabled: boolean;
  /** Largest inflated body: the maximum frame size. */
  readonly maxBytes: number;
  /** Largest inflated size as a multiple of the compressed size. */
  readonly maxRatio: number;
  /** The compressors this side reads, by wire id. Default: the built-ins. */
  readonly compressors?: CompressorTable | undefined;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Inflates a body compressed with compressor `id` within `limits`; throws a ProtocolError naming the
 * bound it crossed, or the compressor it does not know.
 */
export function decompress(body: Buffer, id: number, limits: InflateLimits): Buffer {
  if (!limits.enabled) {
    throw new ProtocolError('compressed bodies are not accepted here (compression is off on this side)');
  }
  const compressor = (limits.compressors ?? BUILTIN_COMPRESSOR_TABLE).byId(id);
  if (compressor === undefined) {
    throw new ProtocolError(`a body compressed with compressor id ${id}, which this side does not have`);
  }
  const byRatio = Math.max(1, Math.floor(body.length * limits.maxRatio));
  const bound = Math.min(limits.maxBytes, byRatio);
  const which = (): string =>
    bound === byRatio && byRatio < limits.maxBytes
      ? `${limits.maxRatio} times its ${body.length} bytes (maxInflateRatio)`
      : `the maximum frame size of ${limits.maxBytes} bytes`;
  let inflated: Uint8Array;
  try {
    inflated = compressor.decompress(body, bound);
  } catch (error) {
    if (error instanceof InflateBoundError) {
      throw new ProtocolError(`a compressed body (${compressor.name}) inflates past ${which()}`);
    }
    throw new ProtocolError(
      `cannot inflate a compressed body (${compressor.name}): ${(error as Error).message}`,
    );
  }
  // a compressor of an extension that ignored the bound is caught here, at least
  if (inflated.length > bound) {
    throw new ProtocolError(`a compressed body (${compressor.name}) inflates past ${which()}`);
  }
  return asBuffer(inflated);
}
