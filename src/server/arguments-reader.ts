/**
 * A request's arguments, from frame body to array, in the order that keeps a body from costing more than
 * it is allowed to: inflated within its bounds, its elements counted without decoding, admitted against
 * the connection's share of the execution slots and of the decoded-elements budget, and only then
 * decoded. One reader per connection; it reuses its state, so reading costs no allocation of its own.
 */
import { messageOf, RpcError } from '../core/rpc-error.js';
import { decompress, type InflateLimits } from '../protocol/compression.js';
import { FrameFlag } from '../protocol/frame.js';
import { type DecodeLimits, decodeBody, measureBody } from '../serialization/decode-limits.js';
import type { Serializer } from '../serialization/serializer.js';
import type { PeerSlot } from './peer-limits.js';

/** More arguments than this are refused (BadRequest) before the handler is called. */
export const MAX_CALL_ARGUMENTS = 10_000;

export interface ArgumentsReader {
  /**
   * The arguments of a request, or the error to answer it with. When arguments are returned the call
   * holds an execution slot and `elements` of the budget: give them back with `slot.release(elements)`.
   */
  read(body: Buffer, flags: number, serializer: Serializer, label: string): unknown[] | RpcError;
  /** Elements the last successful `read` charged to the slot. */
  readonly elements: number;
}

export function createArgumentsReader(
  slot: PeerSlot,
  limits: { readonly decode: DecodeLimits; readonly inflate: InflateLimits },
  onRefused: (reason: string) => void,
): ArgumentsReader {
  let charged = 0;

  /** A request refused for what it carries: logged (naming the peer, by the caller), then answered. */
  const refused = (code: 'Serialization' | 'BadRequest', message: string): RpcError => {
    onRefused(message);
    return new RpcError(code, message);
  };

  return {
    read(body, flags, serializer, label) {
      let bytes: Buffer;
      let elements: number;
      try {
        bytes = (flags & FrameFlag.Compressed) === 0 ? body : decompress(body, limits.inflate);
        elements = measureBody(serializer, bytes, limits.decode);
      } catch (error) {
        return refused('Serialization', `cannot decode the arguments of ${label}: ${messageOf(error)}`);
      }
      const overloaded = slot.admit(elements);
      if (overloaded !== undefined) return new RpcError('Overloaded', overloaded);
      let args: unknown;
      try {
        args = bytes.length === 0 ? [] : decodeBody(serializer, bytes, limits.decode);
      } catch (error) {
        slot.release(elements);
        return refused('Serialization', `cannot decode the arguments of ${label}: ${messageOf(error)}`);
      }
      if (!Array.isArray(args) || args.length > MAX_CALL_ARGUMENTS) {
        slot.release(elements);
        const problem = Array.isArray(args)
          ? `${args.length} arguments; at most ${MAX_CALL_ARGUMENTS} are accepted (pass an array instead)`
          : 'arguments must be an array';
        return refused('BadRequest', `${label}: ${problem}`);
      }
      charged = elements;
      return args;
    },
    get elements() {
      return charged;
    },
  };
}
