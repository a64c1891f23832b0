/**
 * FileDescriptorProtos (google/protobuf/descriptor.proto) for the services declared with protobuf,
 * built from the protobufjs reflection objects the application's Root holds — what gRPC server
 * reflection hands to grpcurl and similar tools. Callisto does not depend on protobufjs: this reads the
 * objects structurally (`fieldsArray`, `nestedArray`, `methodsArray`, `values`, `resolvedType`) and
 * writes the descriptor messages by hand (protocol/grpc/proto-wire.ts).
 *
 * One file per package (`<package>.proto`, named after it, `proto3`) holds the package's messages and
 * enums reachable from the services' methods, and the services; files depend on the files of the other
 * packages they use. Map fields become their nested `…Entry` messages, as protoc writes them.
 */
import { ProtoWriter } from '../../protocol/grpc/proto-wire.js';

/** What this module reads of a protobufjs reflection object. */
interface Reflected {
  readonly name: string;
  readonly fullName: string;
  readonly parent: Reflected | null;
  readonly fieldsArray?: readonly ReflectedField[];
  readonly nestedArray?: readonly Reflected[];
  readonly methodsArray?: readonly ReflectedMethod[];
  readonly values?: Readonly<Record<string, number>>;
  resolveAll?(): unknown;
}

interface ReflectedField {
  readonly name: string;
  readonly id: number;
  readonly type: string;
  readonly rule?: string | undefined;
  readonly map?: boolean;
  readonly keyType?: string;
  readonly resolvedType: Reflected | null;
  readonly partOf?: { readonly name: string } | null;
  readonly options?: Readonly<Record<string, unknown>> | undefined;
}

interface ReflectedMethod {
  readonly name: string;
  readonly requestStream?: boolean;
  readonly responseStream?: boolean;
  readonly resolvedRequestType: Reflected | null;
  readonly resolvedResponseType: Reflected | null;
}

const SCALAR_TYPES: Readonly<Record<string, number>> = {
  double: 1,
  float: 2,
  int64: 3,
  uint64: 4,
  int32: 5,
  fixed64: 6,
  fixed32: 7,
  bool: 8,
  string: 9,
  bytes: 12,
  uint32: 13,
  sfixed32: 15,
  sfixed64: 16,
  sint32: 17,
  sint64: 18,
};
const TYPE_MESSAGE = 11;
const TYPE_ENUM = 14;
const LABEL_OPTIONAL = 1;
const LABEL_REPEATED = 3;

const isType = (object: Reflected): boolean => object.fieldsArray !== undefined;
const isEnum = (object: Reflected): boolean => object.values !== undefined && !isType(object);
const dotless = (name: string): string => name.replace(/^\./, '');

/** The package an object is in: the full name of its first ancestor that is neither a message nor a service. */
function packageOf(object: Reflected): string {
  let parent = object.parent;
  while (parent !== null && (isType(parent) || parent.methodsArray !== undefined)) parent = parent.parent;
  return parent === null ? '' : dotless(parent.fullName);
}

/** The message or enum `object` is nested in at the top of its package (itself when it is at the top). */
function topLevelOf(object: Reflected): Reflected {
  let top = object;
  while (top.parent !== null && isType(top.parent)) top = top.parent;
  return top;
}

const entryName = (field: string): string =>
  `${field.replace(/(?:^|_)([a-z])/g, (_, letter: string) => letter.toUpperCase())}Entry`;

function fieldDescriptor(field: ReflectedField, typeName?: string): Buffer {
  const writer = new ProtoWriter().bytes(1, field.name).uint(3, field.id);
  const repeated = field.rule === 'repeated' || field.map === true;
  writer.uint(4, repeated ? LABEL_REPEATED : LABEL_OPTIONAL);
  const resolved = field.resolvedType;
  if (typeName !== undefined) writer.uint(5, TYPE_MESSAGE).bytes(6, typeName);
  else if (resolved !== null && resolved !== undefined) {
    writer.uint(5, isEnum(resolved) ? TYPE_ENUM : TYPE_MESSAGE).bytes(6, `.${dotless(resolved.fullName)}`);
  } else writer.uint(5, SCALAR_TYPES[field.type] ?? 9);
  return writer.finish();
}

function enumDescriptor(object: Reflected): Buffer {
  const writer = new ProtoWriter().bytes(1, object.name);
  for (const [name, number] of Object.entries(object.values ?? {})) {
    writer.bytes(2, new ProtoWriter().bytes(1, name).uint(2, number).finish());
  }
  return writer.finish();
}

function messageDescriptor(object: Reflected): Buffer {
  const writer = new ProtoWriter().bytes(1, object.name);
  const entries: Buffer[] = [];
  for (const field of object.fieldsArray ?? []) {
    if (field.map === true) {
      const entry = entryName(field.name);
      const value = { ...field, name: 'value', id: 2, map: false, rule: undefined } as ReflectedField;
      const key = {
        name: 'key',
        id: 1,
        type: field.keyType ?? 'string',
        resolvedType: null,
      } as ReflectedField;
      entries.push(
        new ProtoWriter()
          .bytes(1, entry)
          .bytes(2, fieldDescriptor(key))
          .bytes(2, fieldDescriptor(value))
          .bytes(7, new ProtoWriter().uint(7, 1).finish())
          .finish(),
      );
      writer.bytes(2, fieldDescriptor(field, `.${dotless(object.fullName)}.${entry}`));
    } else writer.bytes(2, fieldDescriptor(field));
  }
  for (const nested of object.nestedArray ?? []) {
    if (isType(nested)) writer.bytes(3, messageDescriptor(nested));
    else if (isEnum(nested)) writer.bytes(4, enumDescriptor(nested));
  }
  for (const entry of entries) writer.bytes(3, entry);
  return writer.finish();
}

function serviceDescriptor(service: Reflected): Buffer {
  const writer = new ProtoWriter().bytes(1, service.name);
  for (const method of service.methodsArray ?? []) {
    const m = new ProtoWriter()
      .bytes(1, method.name)
      .bytes(2, `.${dotless(method.resolvedRequestType?.fullName ?? '')}`)
      .bytes(3, `.${dotless(method.resolvedResponseType?.fullName ?? '')}`);
    if (method.requestStream) m.uint(5, 1);
    if (method.responseStream) m.uint(6, 1);
    writer.bytes(2, m.finish());
  }
  return writer.finish();
}

/** The file name of `pkg`'s descriptor. */
export const fileNameOf = (pkg: string): string => `${pkg || 'default'}.proto`;

export interface DescriptorFiles {
  /** Encoded FileDescriptorProtos by file name. */
  readonly files: ReadonlyMap<string, Buffer>;
  /** The file a fully qualified symbol (service, method, message, enum) is in. */
  readonly symbols: ReadonlyMap<string, string>;
  /** The files a file depends on. */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
}

/** The descriptor files of `services` (protobufjs Service objects). */
export function buildDescriptorFiles(services: readonly unknown[]): DescriptorFiles {
  const byPackage = new Map<string, { tops: Set<Reflected>; services: Set<Reflected>; deps: Set<string> }>();
  const packageEntry = (pkg: string) => {
    let entry = byPackage.get(pkg);
    if (entry === undefined) {
      entry = { tops: new Set(), services: new Set(), deps: new Set() };
      byPackage.set(pkg, entry);
    }
    return entry;
  };
  const symbols = new Map<string, string>();
  const visited = new Set<Reflected>();
  const visit = (object: Reflected, from: string): void => {
    const top = topLevelOf(object);
    const pkg = packageOf(top);
    if (pkg !== from) packageEntry(from).deps.add(fileNameOf(pkg));
    if (visited.has(top)) return;
    visited.add(top);
    packageEntry(pkg).tops.add(top);
    const walk = (type: Reflected): void => {
      symbols.set(dotless(type.fullName), fileNameOf(pkg));
      for (const field of type.fieldsArray ?? []) if (field.resolvedType) visit(field.resolvedType, pkg);
      for (const nested of type.nestedArray ?? []) walk(nested);
    };
    walk(top);
  };
  for (const raw of services) {
    const service = raw as Reflected;
    let root: Reflected = service;
    while (root.parent !== null) root = root.parent;
    root.resolveAll?.();
    const pkg = packageOf(service);
    packageEntry(pkg).services.add(service);
    symbols.set(dotless(service.fullName), fileNameOf(pkg));
    for (const method of service.methodsArray ?? []) {
      symbols.set(`${dotless(service.fullName)}.${method.name}`, fileNameOf(pkg));
      if (method.resolvedRequestType) visit(method.resolvedRequestType, pkg);
      if (method.resolvedResponseType) visit(method.resolvedResponseType, pkg);
    }
  }
  const files = new Map<string, Buffer>();
  const dependencies = new Map<string, readonly string[]>();
  for (const [pkg, entry] of byPackage) {
    const name = fileNameOf(pkg);
    const deps = [...entry.deps].filter((dep) => dep !== name).sort();
    const writer = new ProtoWriter().bytes(1, name);
    if (pkg) writer.bytes(2, pkg);
    for (const dep of deps) writer.bytes(3, dep);
    for (const top of entry.tops) {
      if (isType(top)) writer.bytes(4, messageDescriptor(top));
      else if (isEnum(top)) writer.bytes(5, enumDescriptor(top));
    }
    for (const service of entry.services) writer.bytes(6, serviceDescriptor(service));
    writer.bytes(12, 'proto3');
    files.set(name, writer.finish());
    dependencies.set(name, deps);
  }
  return { files, symbols, dependencies };
}
