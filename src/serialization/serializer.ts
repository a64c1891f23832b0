/**
 * The serializer extension point. A request names its serializer by `id` in the frame header; the
 * provider answers in the same one. Implementations must round-trip every value they accept and throw
 * (any error) on input they cannot decode; the protocol layer turns that into a `Serialization` RpcError.
 */
export interface Serializer {
  /** Wire id, 1..255, unique among registered serializers. */
  readonly id: number;
  /** Name used in configuration (`serializer: 'msgpack'`). */
  readonly name: string;
  /** Encodes a value. The returned bytes must stay valid after the next call to `encode`. */
  encode(value: unknown): Uint8Array;
  /** Decodes bytes produced by `encode` (possibly by another process). */
  decode(bytes: Uint8Array): unknown;
}
