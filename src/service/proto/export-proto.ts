/**
 * `exportProto(definition)`: the `.proto` (proto3) of a service, for other languages to generate
 * clients from (docs/schemas.md). From the service's protobuf declaration when it has one
 * (proto-from-reflection.ts: the service and every message and enum it reaches), otherwise from its
 * methods' schemas (proto-from-schema.ts). The file's package and service are the names gRPC clients
 * call: `/<package>.<Service>/<method>`, the protobuf declaration's own service name, or the
 * definition's name (`example.UserService`: package `example`, service `UserService`).
 */
import type { ServiceDefinition } from '../define-service.js';
import { protoFromReflection } from './proto-from-reflection.js';
import { protoFromSchemas } from './proto-from-schema.js';
import type { ProtoFile } from './proto-model.js';
import { splitServiceName } from './proto-names.js';
import { renderProto } from './proto-render.js';

/**
 * The `.proto` text of `definition`. Throws a TypeError naming the service (the method, the parameter
 * path) and what to declare when it cannot be written: a service with neither protobuf messages nor
 * argument schemas, a type protobuf cannot say.
 */
export function exportProto(definition: ServiceDefinition<unknown>): string {
  return renderProto(protoFileOf(definition));
}

function protoFileOf(definition: ServiceDefinition<unknown>): ProtoFile {
  const { name, version, group } = definition;
  const key = `${name} ${version}${group === '' ? '' : ` (group ${group})`}`;
  const declared = definition.methods === undefined ? undefined : Object.keys(definition.methods);
  if (definition.protobuf !== undefined && definition.protobuf.origin !== 'schemas') {
    const proto = protoFromReflection(name, definition.protobuf.reflected, declared);
    const full = proto.package === '' ? proto.service : `${proto.package}.${proto.service}`;
    return {
      package: proto.package,
      service: { name: proto.service, rpcs: proto.rpcs },
      types: proto.types,
      imports: proto.imports,
      header: header(full, `the protobuf declaration of the Callisto service ${key}`, proto.rpcs[0]?.name),
    };
  }
  const methods = definition.methods ?? {};
  if (!Object.values(methods).some((method) => method.args !== undefined)) {
    throw new TypeError(
      `${name}: declares neither protobuf messages nor argument schemas, so its .proto cannot be written: declare its messages (defineService('${name}', { protobuf: root }), root loaded from a .proto with protobufjs) or each method's schemas (methods: { m: { args: z.tuple([...]), returns: z.object({...}) } })`,
    );
  }
  const names = splitServiceName(name, name);
  const proto = protoFromSchemas(name, definition.methods);
  return {
    package: names.package,
    service: { name: names.service, rpcs: proto.rpcs },
    types: proto.types,
    imports: proto.imports,
    header: header(
      name,
      `the argument and result schemas of the Callisto service ${key}`,
      proto.rpcs[0]?.name,
    ),
  };
}

function header(full: string, source: string, firstRpc: string | undefined): string[] {
  return [
    `${full}: written by Callisto (exportProto, callisto proto export) from ${source}.`,
    `gRPC calls /${full}/<rpc>${firstRpc === undefined ? '' : `, e.g. /${full}/${firstRpc}`}.`,
    '',
  ];
}
