/**
 * The serializer extension point. A request names its serializer by `id` in the frame header; the
 * provider answers in the same one. Implementations must round-trip every value they accept and throw
 * (any error) on input they cannot decode; the protocol layer turns that into a `Serialization` RpcError.
 *
 * Bounded decoding (see decode-limits.ts): a serializer that can count what a body decodes into without
 * decoding it implements `measure`, and the receiver refuses a body over its limits before decoding it.
 * For one that cannot, the decoded value is walked afterwards (element count, depth, own `__proto__`
 * keys). A serializer whose decoding can allocate far more than its bytes before anything can check
 * (node:v8's) sets `trustedPeersOnly`: it is then accepted only where it is named explicitly.
 */
import type { ServiceKey } from '../core/service-key.js';

export interface Serializer {
  /** Wire id, 1..255, unique among registered serializers. */
  readonly id: number;
  /** Name used in configuration (`serializer: 'msgpack'`). */
  readonly name: string;
  /**
   * Encodes a value. The returned bytes are never written again by the serializer (later calls write
   * elsewhere): a connection may hand a large body to the socket as it is, until it is sent.
   */
  encode(value: unknown): Uint8Array;
  /**
   * Decodes bytes produced by `encode` (possibly by another process). Must never hand out an object
   * with an own `__proto__` key. The value may hold views of `bytes` (msgpack's large byte arrays): a
   * receiver never writes into a body again once it is decoded.
   */
  decode(bytes: Uint8Array): unknown;
  /**
   * Optional: counts the values (elements) `bytes` would decode into, without decoding, and throws when
   * there are more than `maxElements`, when containers nest deeper than MAX_DECODE_DEPTH, or when the
   * structure is malformed. Must cost no more than a small constant per element and allocate nothing
   * per element.
   */
  measure?(bytes: Uint8Array, maxElements: number): number;
  /**
   * Set when even a small body may decode into more elements than it has bytes (protobuf: an empty
   * sub-message is two bytes that become a default for every field of its type): `measure` then runs
   * on every body, not only on those above MEASURE_ABOVE_BYTES.
   */
  readonly measureEveryBody?: boolean;
  /**
   * Set when decoding can allocate far more than the bytes before any check is possible (`v8`: a few
   * bytes can describe an array of 2^25 elements). Such a serializer is accepted only where it is named
   * explicitly (`server.serializers`, `consumer.serializer`): for trusted peers only.
   */
  readonly trustedPeersOnly?: boolean;
  /**
   * Optional, for formats whose bodies depend on the method (protobuf: each method has its own message
   * types): the serializer of one method's bodies, with the same `id`, for one side: on the `consumer`
   * it encodes the arguments and decodes the result, on the `provider` it decodes the arguments and
   * encodes the result. Called once per method on a consumer and for each request on a provider (so it
   * caches); throws when the method has no such bodies. Serializers without it (json, msgpack, v8) serve
   * every method as they are, and their calls pay nothing for it.
   */
  forMethod?(service: ServiceKey, method: string, side: 'consumer' | 'provider'): Serializer;
  /**
   * Optional: the serializer error answers to this serializer's calls are written in (json), for a
   * format that carries only a method's own messages. A consumer accepts error answers in json.
   */
  readonly errors?: Serializer;
}

/** The serializer used when none is configured (`consumer.serializer`). */
export const DEFAULT_SERIALIZER = 'msgpack';
