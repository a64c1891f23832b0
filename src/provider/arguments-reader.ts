/**
 * A request's arguments, from frame body to array, in the order that keeps a body from costing more than
 * it is allowed to: inflated within its bounds and its elements counted without decoding (`measure`,
 * before the provider filters), admitted by the admission filter against the limits, and only then
 * decoded (`decode`, the `decode` filter). One reader per connection; `measure` and `decode` of one
 * request run in the same turn (the filters' start hooks are synchronous), so the reader keeps the bytes
 * in between and costs no allocation of its own.
 */
import { messageOf, RpcError } from '../core/rpc-error.js';
import { decompress, type InflateLimits, UNCOMPRESSED } from '../protocol/compression.js';
import { type DecodeLimits, decodeBody, measureBody } from '../serialization/decode-limits.js';
import type { Serializer } from '../serialization/serializer.js';

/** More arguments than this are refused (BadRequest) before the handler is called. */
export const MAX_CALL_ARGUMENTS = 10_000;

export interface ArgumentsReader {
  /**
   * Inflates and counts a request's body: the number of elements it decodes into, or the error to
   * answer it with (a body over a limit, malformed). Keeps the bytes for `decode`.
   */
  measure(body: Buffer, compression: number, serializer: Serializer, label: string): number | RpcError;
  /** Decodes the bytes the last `measure` kept into the argument list; throws an RpcError. */
  decode(serializer: Serializer, label: string): unknown[];
  /** Drops the bytes the last `measure` kept (its call was refused before it was decoded). */
  forget(): void;
}

const NO_BYTES = Buffer.alloc(0);

export function createArgumentsReader(
  limits: { readonly decode: DecodeLimits; readonly inflate: InflateLimits },
  onRefused: (reason: string) => void,
): ArgumentsReader {
  let kept: Buffer = NO_BYTES;

  /** A request refused for what it carries: logged (naming the peer, by the caller), then answered. */
  const refused = (code: 'Serialization' | 'BadRequest', message: string): RpcError => {
    onRefused(message);
    return new RpcError(code, message);
  };

  return {
    measure(body, compression, serializer, label) {
      try {
        kept = compression === UNCOMPRESSED ? body : decompress(body, compression, limits.inflate);
        return measureBody(serializer, kept, limits.decode);
      } catch (error) {
        kept = NO_BYTES;
        return refused('Serialization', `cannot decode the arguments of ${label}: ${messageOf(error)}`);
      }
    },
    decode(serializer, label) {
      const bytes = kept;
      kept = NO_BYTES;
      let args: unknown;
      try {
        args = bytes.length === 0 ? [] : decodeBody(serializer, bytes, limits.decode);
      } catch (error) {
        throw refused('Serialization', `cannot decode the arguments of ${label}: ${messageOf(error)}`);
      }
      if (!Array.isArray(args) || args.length > MAX_CALL_ARGUMENTS) {
        const problem = Array.isArray(args)
          ? `${args.length} arguments; at most ${MAX_CALL_ARGUMENTS} are accepted (pass an array instead)`
          : 'arguments must be an array';
        throw refused('BadRequest', `${label}: ${problem}`);
      }
      return args;
    },
    forget() {
      kept = NO_BYTES;
    },
  };
}
