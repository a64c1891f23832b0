/**
 * What a consumer accepts as an answer, held to the same bounds as a provider's requests: only the
 * serializer the call was made in (or json, for an error about an unaccepted serializer), a compressed
 * body only when this side asked for compressed answers and only within its inflate bounds, and its
 * elements counted before it is decoded.
 */
import { bodyCompression, decompress, type InflateLimits, UNCOMPRESSED } from '../protocol/compression.js';
import type { Frame } from '../protocol/frame.js';
import { ProtocolError } from '../protocol/protocol-error.js';
import { type DecodeLimits, decodeBody, measureBody } from '../serialization/decode-limits.js';
import { JSON_SERIALIZER_ID } from '../serialization/json.js';
import type { Serializer } from '../serialization/serializer.js';

/** An answer in a serializer the call was not made in: never decoded, and the provider is not trusted further. */
export class ForeignSerializerError extends ProtocolError {}

export interface AnswerLimits {
  readonly decode: DecodeLimits;
  readonly inflate: InflateLimits;
}

/**
 * Decodes the body of an answer to a call made in `asked`; `undefined` for an empty body. Throws a
 * ForeignSerializerError for an answer in another serializer, any other error for a body over a limit
 * or malformed.
 */
export function readAnswer(
  frame: Frame,
  asked: Serializer,
  json: Serializer | undefined,
  limits: AnswerLimits,
  /** The compressor id the call offered to take its answer in. */
  offered = 0,
): unknown {
  const serializer =
    frame.serializer === asked.id
      ? asked
      : frame.status !== 0 && frame.serializer === JSON_SERIALIZER_ID
        ? json
        : undefined;
  if (serializer === undefined) {
    throw new ForeignSerializerError(
      `answered in serializer id ${frame.serializer}; the call was made in ${asked.name} (id ${asked.id})`,
    );
  }
  const compression = bodyCompression(frame);
  if (compression !== UNCOMPRESSED && compression !== offered && limits.inflate.enabled) {
    throw new ProtocolError(
      `answered in compressor id ${compression}; the call offered only compressor id ${offered}`,
    );
  }
  const bytes =
    compression === UNCOMPRESSED ? frame.body : decompress(frame.body, compression, limits.inflate);
  measureBody(serializer, bytes, limits.decode);
  return bytes.length === 0 ? undefined : decodeBody(serializer, bytes, limits.decode);
}
