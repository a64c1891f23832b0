/**
 * Java class names on JS values, for the `hessian2` serializer (docs/serialization.md "hessian2").
 *
 * A Java object travels in Hessian as a class definition (its name and field names) and its field
 * values; a typed list (`String[]`, `int[]`, `java.util.LinkedList`) and a typed map (`java.util.TreeMap`)
 * carry a type name too. On the JS side that name is a non-enumerable property under the symbol
 * {@link JAVA_CLASS} (`Symbol.for`, so that copies of this module agree): JSON, msgpack and `for…in` never
 * see it, and a decoded value re-encodes with the same Java type.
 *
 * - a plain object with a class name is a Java object of that class (`withJavaClass('com.example.User',
 *   { id: 1, name: 'Ann' })`); without one it is a `java.util.HashMap`;
 * - an array with a class name is a typed list (`withJavaClass('[string', ['a'])` is a `String[]`);
 * - a `Map` with a class name is a typed map (`withJavaClass('java.util.TreeMap', new Map(...))`);
 * - a Java enum constant is an object of the enum's class with one field, `name` ({@link javaEnum}).
 */

/** The property holding a value's Java class name. */
export const JAVA_CLASS: unique symbol = Symbol.for('callisto.hessian2.javaClass') as never;

/** What can carry a Java class name: an object (plain or a class instance), an array or a Map. */
export type JavaTypeable = object;

/**
 * Marks `value` (an object, plain or a class instance, an array or a Map) as an instance of the Java
 * class `className` and returns it (the same value, changed in place). Throws a TypeError for values
 * hessian2 writes otherwise (a Date, bytes) or refuses (a Set, a RegExp, an Error, a promise).
 */
export function withJavaClass<T extends JavaTypeable>(className: string, value: T): T {
  if (typeof className !== 'string' || className.length === 0) {
    throw new TypeError(`a Java class name must be a non-empty string, not ${String(className)}`);
  }
  if (typeof value !== 'object' || value === null || !isTypeable(value)) {
    throw new TypeError(
      `only an object, an array or a Map can carry a Java class name (${className}), not ${describe(value)}`,
    );
  }
  Object.defineProperty(value, JAVA_CLASS, { value: className, enumerable: false, configurable: true });
  return value;
}

/** The Java class name `value` carries, if any. */
export function javaClassOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const name = (value as { [JAVA_CLASS]?: unknown })[JAVA_CLASS];
  return typeof name === 'string' ? name : undefined;
}

/** A constant of the Java enum `className`: Hessian writes an enum as an object whose one field is `name`. */
export function javaEnum(className: string, name: string): { name: string } {
  return withJavaClass(className, { name });
}

/** An array, a Map, or an object hessian2 writes field by field (a plain object or a class instance). */
function isTypeable(value: object): boolean {
  if (Array.isArray(value) || value instanceof Map) return true;
  return !(
    value instanceof Date ||
    value instanceof Set ||
    value instanceof RegExp ||
    value instanceof Error ||
    value instanceof ArrayBuffer ||
    ArrayBuffer.isView(value) ||
    typeof (value as { then?: unknown }).then === 'function'
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  return value.constructor?.name ?? 'an object';
}
