/**
 * The `v8` serializer (id 3): node:v8's structured-clone format. It round-trips everything the
 * structured-clone algorithm does (`undefined`, `-0`, NaN, bigint, `Date`, `Map`, `Set`, `RegExp`,
 * `Buffer` (decoded as `Buffer`), typed arrays, `Error`s, and shared or cyclic references) but throws on
 * functions and symbols. Class instances come back as plain objects.
 *
 * The format is versioned by the V8 engine: use it only between processes on the same Node.js major.
 * `deserialize` is V8's own parser; malformed input throws.
 *
 * **For trusted peers only.** A few bytes can describe an array of 2^25 elements, which V8 backs with
 * 256 MiB before anything can check it, and an object may carry an own `__proto__` key. So `v8` is
 * `trustedPeersOnly`: a provider accepts it only when `server.serializers` names it, a consumer uses it
 * only when `consumer.serializer` says so, and the decoded value is still walked (element cap, depth,
 * no own `__proto__`) before it reaches a handler or a caller.
 */
import { deserialize, serialize } from 'node:v8';
import type { Serializer } from './serializer.js';

/** Wire id of the v8 serializer. */
export const V8_SERIALIZER_ID = 3;

/** Creates the `v8` serializer. */
export function createV8Serializer(): Serializer {
  return {
    id: V8_SERIALIZER_ID,
    name: 'v8',
    trustedPeersOnly: true,
    encode(value) {
      return serialize(value);
    },
    decode(bytes) {
      return deserialize(bytes);
    },
  };
}
