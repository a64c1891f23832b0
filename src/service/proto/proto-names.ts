/** Names in `.proto` files: identifiers, scalar types, and the well-known types' files. */

/** A protobuf identifier (a field, message, enum, enum value, service or rpc name). */
export const PROTO_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The scalar types of proto3. */
export const PROTO_SCALARS: ReadonlySet<string> = new Set([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

/** The file each well-known type (`google.protobuf.*`) is declared in, as protoc ships them. */
const WELL_KNOWN_FILES: Readonly<Record<string, string>> = {
  Any: 'any',
  Api: 'api',
  Method: 'api',
  Mixin: 'api',
  Duration: 'duration',
  Empty: 'empty',
  FieldMask: 'field_mask',
  SourceContext: 'source_context',
  Struct: 'struct',
  Value: 'struct',
  ListValue: 'struct',
  NullValue: 'struct',
  Timestamp: 'timestamp',
  Type: 'type',
  Field: 'type',
  Enum: 'type',
  EnumValue: 'type',
  Option: 'type',
  Syntax: 'type',
  DoubleValue: 'wrappers',
  FloatValue: 'wrappers',
  Int64Value: 'wrappers',
  UInt64Value: 'wrappers',
  Int32Value: 'wrappers',
  UInt32Value: 'wrappers',
  BoolValue: 'wrappers',
  StringValue: 'wrappers',
  BytesValue: 'wrappers',
};

export const EMPTY_TYPE = 'google.protobuf.Empty';

/** The import of a well-known type's full name (without a leading dot), or undefined for another type. */
export function wellKnownImport(fullName: string): string | undefined {
  if (!fullName.startsWith('google.protobuf.')) return undefined;
  const file = WELL_KNOWN_FILES[fullName.slice('google.protobuf.'.length).split('.')[0]!];
  return file === undefined ? undefined : `google/protobuf/${file}.proto`;
}

/** `getUser` → `GetUser`, `user_address` → `UserAddress`, `__schema0` → `Schema0`. */
export function pascalCase(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  const joined = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  return /^[0-9]/.test(joined) || joined === '' ? `T${joined}` : joined;
}

/** `example.UserService` → package `example`, service `UserService`; throws when not a protobuf full name. */
export function splitServiceName(name: string, label: string): { package: string; service: string } {
  const parts = name.split('.');
  if (!parts.every((part) => PROTO_IDENTIFIER.test(part))) {
    throw new TypeError(
      `${label}: the service name "${name}" is not a protobuf full name (dot-separated identifiers of letters, digits and _): rename the service, or declare its .proto with defineService(name, { protobuf: { root, service } })`,
    );
  }
  return { package: parts.slice(0, -1).join('.'), service: parts.at(-1)! };
}
