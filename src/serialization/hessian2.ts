/**
 * The `hessian2` serializer (id 5): Hessian 2.0, the default serialization of Dubbo 2, so that bodies
 * carry values as Java services see them. Checked against Caucho's own implementation (Debian's
 * libhessian-java, Hessian 4.0.38) on the JDK, for every row of the mapping (test/interop/hessian2-java.test.ts).
 *
 * ## Mapping (docs/serialization.md "hessian2" has the table with the Java side)
 *
 * | JS | Hessian | Java |
 * |---|---|---|
 * | `null`, `undefined` | null | `null` (undefined comes back `null`) |
 * | boolean | boolean | `Boolean` |
 * | number, an integer in int32 (not -0) | int | `Integer` (also `int`, `short`, `byte` fields) |
 * | any other number (fractions, larger integers, -0, NaN, ±Infinity) | double | `Double` |
 * | bigint in int64 (others throw) | long | `Long` |
 * | string (lone surrogates included) | string (UTF-16 units) | `String` (`char` fields: one unit) |
 * | Buffer, Uint8Array, ArrayBuffer | binary | `byte[]` (decoded as a Buffer, copied) |
 * | Date | date | `java.util.Date` |
 * | array | untyped list | `ArrayList` |
 * | array with a class name ({@link withJavaClass}) | typed list | `String[]`, `int[]`, `LinkedList`, `HashSet`… |
 * | plain object, class instance (own enumerable fields) | untyped map, string keys | `HashMap<String, Object>` |
 * | Map | untyped map | `HashMap` (any keys) |
 * | Map with a class name | typed map | `TreeMap`, `LinkedHashMap`… |
 * | object or class instance with a class name | object (class definition + fields) | that class (`com.example.User`) |
 * | {@link javaEnum}`(class, name)` | object with one field `name` | that enum's constant |
 * | the same object twice, a cycle | reference | the same instance |
 *
 * Decoded: an untyped map whose keys are all strings (none `__proto__`) is a plain object, any other a
 * `Map`; a Java long is always a bigint (never a number that might have lost digits); an int, a double,
 * a float, a short, a byte are numbers; a char is a one-unit string. Refused when encoding, with a
 * TypeError naming it: functions, symbols, Set, typed arrays other than Uint8Array, RegExp, Error,
 * promises, invalid Dates, bigints outside 64 bits, nesting deeper than 1000.
 *
 * ## Why it is written here, not taken from `hessian.js`
 *
 * hessian.js (2.11) was audited for this serializer and not used: its decoder sets decoded map keys on a
 * plain object by assignment, so a key `__proto__` replaces the decoded object's prototype (a payload
 * chooses what every property lookup on it finds); it builds a JavaExceptionError (a stack trace, each)
 * for every class whose name ends in "Exception"; it turns longs beyond 2^53 into strings, stringifies
 * map keys (keeping a second, hidden ES6 Map of each map), has no variable-length lists, shares the
 * frame's memory in every decoded binary, recurses without a depth limit, and has no bigint encoding.
 * Guarding it would take a scan that is a full Hessian parser anyway (string lengths count UTF-16
 * units, so skipping one means reading its UTF-8; an object's value count is in its class definition)
 * plus a walk rewriting its output: more code than the codec. Written here, the codec is ~700 lines
 * with no runtime dependency (so nothing to install: `hessian2` is built in) and bounded by
 * construction, and its wire is proven against Caucho's, not against another JS implementation.
 *
 * ## Bounded decoding
 *
 * Every body is scanned first (`measure`, hessian2-scan.ts, on every body: through references a small
 * body can describe a huge value), then decoded (hessian2-decoder.ts), which checks every length
 * against the bytes left and allocates nothing from a claim. Both throw DecodeLimitError or TypeError,
 * which the receiver answers with `Serialization`.
 */
import { decodeHessian2 } from './hessian2-decoder.js';
import { encodeHessian2 } from './hessian2-encoder.js';
import { measureHessian2 } from './hessian2-scan.js';
import type { Serializer } from './serializer.js';

/** Wire id of the hessian2 serializer. */
export const HESSIAN2_SERIALIZER_ID = 5;

/** Creates the `hessian2` serializer. */
export function createHessian2Serializer(): Serializer {
  return {
    id: HESSIAN2_SERIALIZER_ID,
    name: 'hessian2',
    measureEveryBody: true,
    encode: encodeHessian2,
    decode: decodeHessian2,
    measure: measureHessian2,
  };
}
