/**
 * The protobuf messages of a service defined with schemas (proto-from-schema.ts), as the structural
 * protobufjs-like root Callisto's protobuf binding reads (serialization/protobuf.ts: `lookupService`,
 * `lookupType`, each type's `fieldsArray`, `encode`, `decode`, `fromObject`, `toObject`): so such a
 * service takes protobuf bodies (HTTP, the protobuf serializer, gRPC) without a `.proto` or protobufjs,
 * its messages those `exportProto` writes.
 *
 * Decoding gives what the argument schemas expect: every field present with its proto3 default (an
 * absent message field `null`), except optional fields (`oneof _x`), which are absent; enums as their
 * names; `int64` as a number when it is a safe integer (the schema's `integer`), else its decimal
 * string; strings checked as UTF-8; nesting at most 100 deep; a map key `__proto__` refused.
 */
import type { ProtobufRoot, ProtobufService, ProtobufType } from '../../serialization/protobuf.js';
import type { ProtoEnum, ProtoField, ProtoMessage, ProtoRpc } from './proto-model.js';
import { EMPTY_TYPE } from './proto-names.js';
import { WIRE_DELIMITED, WIRE_FIXED64, WIRE_VARINT, WireReader, WireWriter } from './wire.js';

/** protobufjs' (and protoc's) nesting limit. */
const MAX_DEPTH = 100;

export interface SchemaRootInit {
  readonly package: string;
  readonly service: string;
  readonly rpcs: readonly ProtoRpc[];
  readonly types: ReadonlyArray<ProtoMessage | ProtoEnum>;
}

/** What every object also carries, as protobufjs' reflection objects do (gRPC reflection reads them). */
interface Reflected {
  readonly name: string;
  readonly fullName: string;
  readonly parent: Reflected | null;
}

interface CodecEnum extends Reflected {
  readonly values: Readonly<Record<string, number>>;
  readonly names: ReadonlyMap<number, string>;
}

interface CodecField {
  readonly name: string;
  readonly id: number;
  readonly type: string;
  readonly repeated: boolean;
  readonly map: boolean;
  readonly optional: boolean;
  resolvedType?: CodecType | CodecEnum | undefined;
  /** As protobufjs says it: `repeated`, the map's key type, proto3 optional as a synthetic oneof. */
  readonly rule?: 'repeated' | undefined;
  readonly keyType?: string | undefined;
  readonly partOf?: { readonly name: string } | null;
  readonly options?: Readonly<Record<string, unknown>> | undefined;
}

interface CodecType extends Omit<ProtobufType, 'fieldsArray'> {
  readonly name: string;
  readonly parent: Reflected | null;
  readonly fieldsArray: CodecField[];
  readonly nestedArray: Array<CodecType | CodecEnum>;
  readonly oneofsArray: Array<{ readonly name: string; readonly oneof: string[] }>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();
const PACKABLE = new Set(['double', 'int32', 'int64', 'bool']);

const isType = (value: unknown): value is CodecType =>
  typeof value === 'object' && value !== null && 'fieldsArray' in value;

export function createSchemaRoot(init: SchemaRootInit): ProtobufRoot {
  const prefix = init.package === '' ? '' : `${init.package}.`;
  const types = new Map<string, CodecType | CodecEnum>();
  const pending: Array<{ type: CodecType; model: ProtoMessage; scope: string }> = [];

  const namespaces = new Map<string, Reflected>([['', { name: '', fullName: '', parent: null }]]);
  const namespaceOf = (name: string): Reflected => {
    const known = namespaces.get(name);
    if (known !== undefined) return known;
    const dot = name.lastIndexOf('.');
    const made = {
      name: name.slice(dot + 1),
      fullName: `.${name}`,
      parent: namespaceOf(dot < 0 ? '' : name.slice(0, dot)),
    };
    namespaces.set(name, made);
    return made;
  };

  const register = (
    model: ProtoMessage | ProtoEnum,
    scope: string,
    parent: Reflected,
  ): CodecType | CodecEnum => {
    const full = `${scope}${model.name}`;
    if (model.kind === 'enum') {
      const values = Object.fromEntries(model.values.map((value) => [value.name, value.number]));
      const names = new Map(model.values.map((value) => [value.number, value.name]));
      const made: CodecEnum = { name: model.name, fullName: `.${full}`, parent, values, names };
      types.set(full, made);
      return made;
    }
    const type = messageType(`.${full}`, model.name, parent);
    types.set(full, type);
    pending.push({ type, model, scope: full });
    for (const nested of model.nested) type.nestedArray.push(register(nested, `${full}.`, type));
    return type;
  };
  types.set(EMPTY_TYPE, messageType(`.${EMPTY_TYPE}`, 'Empty', namespaceOf('google.protobuf')));
  for (const model of init.types) register(model, prefix, namespaceOf(init.package));

  /** Resolves `name` as protoc does: from the innermost scope outwards. */
  const resolve = (name: string, scope: string): CodecType | CodecEnum | undefined => {
    let at = scope;
    for (;;) {
      const found = types.get(at === '' ? name : `${at}.${name}`);
      if (found !== undefined) return found;
      if (at === '') return undefined;
      at = at.includes('.') ? at.slice(0, at.lastIndexOf('.')) : '';
    }
  };
  for (const { type, model, scope } of pending) {
    for (const field of model.fields) {
      const made = codecField(field, resolve(field.type, scope));
      type.fieldsArray.push(made);
      if (made.partOf != null) type.oneofsArray.push({ name: made.partOf.name, oneof: [made.name] });
    }
  }

  const fullService = `${prefix}${init.service}`;
  const lookupType = (path: string): CodecType => {
    const name = path.replace(/^\./, '');
    const type = types.get(name) ?? types.get(`${prefix}${name}`);
    if (!isType(type)) throw new Error(`no message type ${path}`);
    return type;
  };
  const serviceObject = {
    name: init.service,
    fullName: `.${fullService}`,
    parent: namespaceOf(init.package),
  };
  const methodsArray = init.rpcs.map((rpc) => {
    const full = (name: string) => (name === EMPTY_TYPE ? EMPTY_TYPE : `${prefix}${name}`);
    return {
      name: rpc.name,
      type: 'rpc',
      parent: serviceObject,
      requestType: full(rpc.request),
      responseType: full(rpc.response),
      requestStream: rpc.requestStream,
      responseStream: rpc.responseStream,
      resolvedRequestType: lookupType(full(rpc.request)),
      resolvedResponseType: lookupType(full(rpc.response)),
    };
  });
  const service: ProtobufService = Object.assign(serviceObject, {
    methods: Object.fromEntries(methodsArray.map((method) => [method.name, method])),
    methodsArray,
    nestedArray: [],
    lookupType,
  });
  return {
    lookupService(path) {
      if (path.replace(/^\./, '') !== fullService) throw new Error(`no service ${path}`);
      return service;
    },
    lookupType,
  };
}

function codecField(field: ProtoField, resolved: CodecType | CodecEnum | undefined): CodecField {
  return {
    name: field.name,
    id: field.id,
    type: field.type,
    repeated: field.label === 'repeated',
    map: field.keyType !== undefined,
    optional: field.label === 'optional',
    resolvedType: resolved,
    rule: field.label === 'repeated' ? 'repeated' : undefined,
    keyType: field.keyType,
    partOf: field.label === 'optional' ? { name: `_${field.name}` } : null,
    options: field.label === 'optional' ? { proto3_optional: true } : undefined,
  };
}

function messageType(fullName: string, name: string, parent: Reflected): CodecType {
  const fieldsArray: CodecField[] = [];
  const type: CodecType = {
    name,
    fullName,
    parent,
    fieldsArray,
    nestedArray: [],
    oneofsArray: [],
    encode(message) {
      const writer = new WireWriter();
      encodeMessage(type, message as Record<string, unknown>, writer, 0);
      return writer;
    },
    decode(bytes) {
      return decodeMessage(type, bytes, 0);
    },
    fromObject: (object) => object,
    toObject: (message) => message as Record<string, unknown>,
  };
  return type;
}

function encodeMessage(
  type: CodecType,
  message: Record<string, unknown>,
  writer: WireWriter,
  depth: number,
): void {
  if (depth > MAX_DEPTH) throw new TypeError(`a message nests deeper than ${MAX_DEPTH} levels`);
  for (const field of type.fieldsArray) {
    const value = message[field.name];
    if (value === undefined || value === null) continue;
    if (field.map) {
      if (typeof value !== 'object') throw new TypeError(`${field.name}: a map must be an object`);
      for (const [key, item] of Object.entries(value)) {
        const entry = new WireWriter();
        writeValue({ ...field, type: 'string', resolvedType: undefined }, 1, key, entry, depth);
        writeValue(field, 2, item, entry, depth);
        writer.tag(field.id, WIRE_DELIMITED);
        writer.delimited(entry.finish());
      }
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new TypeError(`${field.name}: a repeated field must be an array`);
      if (PACKABLE.has(field.type) || (field.resolvedType !== undefined && !isType(field.resolvedType))) {
        const packed = new WireWriter();
        for (const item of value) writeRaw(field, item, packed, depth);
        writer.tag(field.id, WIRE_DELIMITED);
        writer.delimited(packed.finish());
      } else {
        for (const item of value) writeValue(field, field.id, item, writer, depth);
      }
    } else if (field.optional || !isDefault(field, value)) {
      writeValue(field, field.id, value, writer, depth);
    }
  }
}

function isDefault(field: CodecField, value: unknown): boolean {
  if (isType(field.resolvedType)) return false;
  if (field.resolvedType !== undefined) return enumNumber(field, value) === 0;
  return (
    value === '' ||
    value === 0 ||
    value === 0n ||
    value === false ||
    (field.type === 'int64' && value === '0')
  );
}

function enumNumber(field: CodecField, value: unknown): number {
  const enumType = field.resolvedType as CodecEnum;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  const number = typeof value === 'string' ? enumType.values[value] : undefined;
  if (number === undefined)
    throw new TypeError(`${field.name}: ${JSON.stringify(value)} is not a value of its enum`);
  return number;
}

function wireOf(field: CodecField): number {
  if (isType(field.resolvedType) || field.type === 'string') return WIRE_DELIMITED;
  return field.type === 'double' ? WIRE_FIXED64 : WIRE_VARINT;
}

function writeValue(field: CodecField, id: number, value: unknown, writer: WireWriter, depth: number): void {
  writer.tag(id, wireOf(field));
  writeRaw(field, value, writer, depth);
}

function writeRaw(field: CodecField, value: unknown, writer: WireWriter, depth: number): void {
  const resolved = field.resolvedType;
  if (isType(resolved)) {
    if (typeof value !== 'object' || value === null)
      throw new TypeError(`${field.name}: a message must be an object`);
    const inner = new WireWriter();
    encodeMessage(resolved, value as Record<string, unknown>, inner, depth + 1);
    writer.delimited(inner.finish());
  } else if (resolved !== undefined) {
    writer.varint(BigInt(enumNumber(field, value)));
  } else if (field.type === 'string') {
    writer.delimited(encoder.encode(String(value)));
  } else if (field.type === 'double') {
    writer.double(Number(value));
  } else if (field.type === 'bool') {
    writer.varint(value === true || value === 'true' ? 1 : 0);
  } else {
    const integer =
      typeof value === 'bigint'
        ? value
        : BigInt(typeof value === 'number' ? Math.trunc(value) : String(value));
    writer.varint(field.type === 'int32' ? BigInt.asIntN(32, integer) : BigInt.asIntN(64, integer));
  }
}

function decodeMessage(type: CodecType, bytes: Uint8Array, depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) throw new RangeError(`a body nests messages deeper than ${MAX_DEPTH} levels`);
  const out: Record<string, unknown> = {};
  const reader = new WireReader(bytes);
  while (!reader.done) {
    const tag = reader.length();
    const id = Math.floor(tag / 8);
    const wire = tag % 8;
    const field = type.fieldsArray.find((each) => each.id === id);
    if (field === undefined) {
      reader.skip(wire);
      continue;
    }
    if (field.map) {
      const entry = new WireReader(expectWire(reader, wire, WIRE_DELIMITED).delimited());
      let key = '';
      let value: unknown;
      while (!entry.done) {
        const entryTag = entry.length();
        if (entryTag === (1 << 3) + WIRE_DELIMITED) key = utf8.decode(entry.delimited());
        else if (Math.floor(entryTag / 8) === 2) value = readValue(field, entryTag % 8, entry, depth);
        else entry.skip(entryTag % 8);
      }
      if (key === '__proto__') throw new RangeError('a map key __proto__ is refused');
      out[field.name] ??= {};
      (out[field.name] as Record<string, unknown>)[key] = value ?? defaultOf(field);
    } else if (field.repeated) {
      out[field.name] ??= [];
      const list = out[field.name] as unknown[];
      if (wire === WIRE_DELIMITED && wireOf(field) !== WIRE_DELIMITED) {
        const packed = new WireReader(reader.delimited());
        while (!packed.done) list.push(readRaw(field, packed, depth));
      } else {
        list.push(readValue(field, wire, reader, depth));
      }
    } else {
      out[field.name] = readValue(field, wire, reader, depth);
    }
  }
  for (const field of type.fieldsArray) {
    if (field.name in out || field.optional) continue;
    out[field.name] = field.map ? {} : field.repeated ? [] : defaultOf(field);
  }
  return out;
}

function defaultOf(field: CodecField): unknown {
  const resolved = field.resolvedType;
  if (isType(resolved)) return null;
  if (resolved !== undefined) return resolved.names.get(0) ?? 0;
  return field.type === 'string' ? '' : field.type === 'bool' ? false : 0;
}

function expectWire(reader: WireReader, wire: number, expected: number): WireReader {
  if (wire !== expected)
    throw new RangeError(`malformed protobuf: wire type ${wire} where ${expected} was expected`);
  return reader;
}

function readValue(field: CodecField, wire: number, reader: WireReader, depth: number): unknown {
  return readRaw(field, expectWire(reader, wire, wireOf(field)), depth);
}

function readRaw(field: CodecField, reader: WireReader, depth: number): unknown {
  const resolved = field.resolvedType;
  if (isType(resolved)) return decodeMessage(resolved, reader.delimited(), depth + 1);
  if (resolved !== undefined) {
    const number = Number(BigInt.asIntN(32, reader.varint()));
    return resolved.names.get(number) ?? number;
  }
  switch (field.type) {
    case 'string':
      return utf8.decode(reader.delimited());
    case 'double':
      return reader.double();
    case 'bool':
      return reader.varint() !== 0n;
    case 'int32':
      return Number(BigInt.asIntN(32, reader.varint()));
    default: {
      const value = BigInt.asIntN(64, reader.varint());
      const number = Number(value);
      return Number.isSafeInteger(number) ? number : value.toString();
    }
  }
}
