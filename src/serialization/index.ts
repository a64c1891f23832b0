/**
 * Serialization: the `Serializer` contract and the built-in serializers (kind `serializer`, in
 * app/builtin-extensions.ts's constant table).
 */
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type {} from './extension.js';
import { createHessian2Serializer } from './hessian2.js';
import { createJsonSerializer } from './json.js';
import { createMsgpackSerializer } from './msgpack.js';
import { createV8Serializer } from './v8.js';

export { createHessian2Serializer, HESSIAN2_SERIALIZER_ID } from './hessian2.js';
export { JAVA_CLASS, javaClassOf, javaEnum, withJavaClass } from './hessian2-java.js';
export { createJsonSerializer, JSON_SERIALIZER_ID, MAX_JSON_DEPTH } from './json.js';
export {
  createMsgpackSerializer,
  MAX_MSGPACK_DEPTH,
  MSGPACK_MAP_EXTENSION,
  MSGPACK_SERIALIZER_ID,
} from './msgpack.js';

import type { Serializer } from './serializer.js';

export { DEFAULT_SERIALIZER, type Serializer } from './serializer.js';
export {
  createSerializerTable,
  MAX_SERIALIZER_ID,
  MIN_SERIALIZER_ID,
  type SerializerTable,
} from './serializer-table.js';
export { createV8Serializer, V8_SERIALIZER_ID } from './v8.js';

/** The built-in serializers by name: one instance each, shared (serializers hold no per-app state). */
export const BUILTIN_SERIALIZERS: Readonly<Record<string, Serializer>> = Object.freeze(
  Object.fromEntries(
    [createJsonSerializer(), createMsgpackSerializer(), createV8Serializer(), createHessian2Serializer()].map(
      (serializer) => [serializer.name, serializer],
    ),
  ),
);

/** Registers `json`, `msgpack`, `v8` and `hessian2` in `registry` (overriding registrations of the same names). */
export function registerBuiltinSerializers(registry: ExtensionRegistry): void {
  for (const serializer of Object.values(BUILTIN_SERIALIZERS))
    registry.register('serializer', serializer.name, serializer);
}
