/**
 * The protobuf binding of a service defined with schemas: the messages `exportProto` writes for it
 * (proto-from-schema.ts), as a root of its own (schema-root.ts), bound as a declared `.proto` would be.
 * So such a service takes protobuf bodies too (the HTTP entry, the protobuf serializer, gRPC), its
 * callers generating their clients from `callisto proto export`. Undefined when a method cannot be
 * written as protobuf (exportProto says why).
 */
import { bindProtobuf, type ProtobufBinding } from '../../serialization/protobuf.js';
import { protoFromSchemas, type SchemaMethod } from './proto-from-schema.js';
import { splitServiceName } from './proto-names.js';
import { createSchemaRoot } from './schema-root.js';

/** Whether every declared method has both schemas (then the service may have messages of its own). */
export function hasSchemas(methods: Readonly<Record<string, SchemaMethod>> | undefined): boolean {
  const declared = Object.values(methods ?? {});
  return (
    declared.length > 0 &&
    declared.every((method) => method.args !== undefined && method.returns !== undefined)
  );
}

export function schemaBinding(
  name: string,
  methods: Readonly<Record<string, SchemaMethod>>,
): ProtobufBinding | undefined {
  try {
    const proto = protoFromSchemas(name, methods);
    const names = splitServiceName(name, name);
    const root = createSchemaRoot({ package: names.package, service: names.service, ...proto });
    return { ...bindProtobuf(root, name, Object.keys(methods)), origin: 'schemas' };
  } catch {
    return undefined;
  }
}
