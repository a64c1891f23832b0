/**
 * The ProtoFile of a service declared with protobuf messages (`defineService(name, { protobuf })`),
 * read from the protobufjs reflection objects it was bound from: the service, its rpcs (streams
 * included), and every message and enum they reach, with their nested types; the well-known types
 * (`google.protobuf.*`) are imported, not written. Structural: Callisto does not import protobufjs.
 */
import type { ProtobufService } from '../../serialization/protobuf.js';
import type { ProtoEnum, ProtoField, ProtoMessage, ProtoRpc } from './proto-model.js';
import { PROTO_SCALARS, wellKnownImport } from './proto-names.js';

/** What is read of any protobufjs reflection object. */
interface Reflected {
  readonly name: string;
  readonly fullName: string;
  readonly parent: Reflected | null;
}

interface ReflectedField {
  readonly name: string;
  readonly id: number;
  readonly type: string;
  readonly rule?: string | undefined;
  readonly repeated?: boolean;
  readonly map?: boolean;
  readonly keyType?: string;
  readonly partOf?: { readonly name: string; readonly options?: Readonly<Record<string, unknown>> } | null;
  readonly options?: Readonly<Record<string, unknown>> | undefined;
  readonly resolvedType?: unknown;
  resolve?(): unknown;
}

interface ReflectedType extends Reflected {
  readonly fieldsArray: readonly ReflectedField[];
  readonly nestedArray?: readonly unknown[];
  readonly reserved?: ReadonlyArray<readonly number[] | string> | undefined;
}

interface ReflectedEnum extends Reflected {
  readonly values: Readonly<Record<string, number>>;
  readonly options?: Readonly<Record<string, unknown>> | undefined;
}

interface ReflectedMethod {
  readonly requestType: string;
  readonly responseType: string;
  readonly requestStream?: boolean;
  readonly responseStream?: boolean;
}

export interface ReflectedProto {
  readonly package: string;
  readonly service: string;
  readonly rpcs: readonly ProtoRpc[];
  readonly types: ReadonlyArray<ProtoMessage | ProtoEnum>;
  readonly imports: readonly string[];
}

const isMessage = (value: unknown): value is ReflectedType =>
  typeof value === 'object' && value !== null && Array.isArray((value as ReflectedType).fieldsArray);
const isEnum = (value: unknown): value is ReflectedEnum =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ReflectedEnum).values === 'object' &&
  typeof (value as ReflectedEnum).fullName === 'string';

const plain = (fullName: string): string => fullName.replace(/^\./, '');

/**
 * The service `reflected` (a protobufjs Service) with the rpcs `methods` (undefined: all of them). Throws a TypeError
 * naming `label` and the type when a reached type is in another package (one `.proto` holds one package)
 * or uses what proto3 cannot say (proto2 `required`, an enum whose first value is not 0).
 */
export function protoFromReflection(
  label: string,
  reflected: ProtobufService,
  methods: readonly string[] | undefined,
): ReflectedProto {
  const service = reflected as ProtobufService & Reflected;
  const packageName = plain(service.parent?.fullName ?? '');
  const imports = new Set<string>();
  const reached = new Map<string, ReflectedType | ReflectedEnum>();

  /** How the file names a type: package-relative, or the well-known type's full name. */
  const nameOf = (type: Reflected): string => {
    const full = plain(type.fullName);
    if (wellKnownImport(full) !== undefined) return full;
    return packageName === '' ? full : full.slice(packageName.length + 1);
  };

  const topLevelOf = (type: Reflected): Reflected => {
    let top = type;
    while (top.parent !== null && (isMessage(top.parent) || isEnum(top.parent))) top = top.parent;
    return top;
  };

  const reach = (type: ReflectedType | ReflectedEnum, from: string): void => {
    const full = plain(type.fullName);
    const imported = wellKnownImport(full);
    if (imported !== undefined) {
      imports.add(imported);
      return;
    }
    const top = topLevelOf(type) as ReflectedType | ReflectedEnum;
    const topPackage = plain(top.parent?.fullName ?? '');
    if (topPackage !== packageName) {
      throw new TypeError(
        `${label}: ${from} uses ${full}, of package ${topPackage || '(none)'}, and the service is in package ${packageName || '(none)'}: a .proto holds one package; declare ${full} in package ${packageName || '(none)'} (or nest it in a message of it)`,
      );
    }
    if (reached.has(plain(top.fullName))) return;
    reached.set(plain(top.fullName), top);
    walk(top);
  };

  const walk = (type: ReflectedType | ReflectedEnum): void => {
    if (!isMessage(type)) return;
    for (const field of type.fieldsArray) {
      field.resolve?.();
      const resolved = field.resolvedType;
      if (isMessage(resolved) || isEnum(resolved)) reach(resolved, `${plain(type.fullName)}.${field.name}`);
    }
    for (const nested of type.nestedArray ?? []) if (isMessage(nested)) walk(nested);
  };

  const lookup = (name: string): ReflectedType => {
    if (service.lookupType === undefined) {
      throw new TypeError(
        `${label}: the protobuf service cannot look up its message types (a protobufjs Service can)`,
      );
    }
    return service.lookupType(name) as unknown as ReflectedType;
  };

  const names = methods ?? Object.keys(service.methods);
  const rpcs = names.map((name): ProtoRpc => {
    const method = service.methods[name] as ReflectedMethod;
    const request = lookup(method.requestType);
    const response = lookup(method.responseType);
    reach(request, `rpc ${name}`);
    reach(response, `rpc ${name}`);
    return {
      name,
      request: nameOf(request),
      response: nameOf(response),
      requestStream: method.requestStream === true,
      responseStream: method.responseStream === true,
    };
  });

  const modelOf = (type: ReflectedType | ReflectedEnum): ProtoMessage | ProtoEnum =>
    isMessage(type) ? messageModel(type) : enumModel(type);

  const messageModel = (type: ReflectedType): ProtoMessage => ({
    kind: 'message',
    name: type.name,
    fields: type.fieldsArray.map((field) => fieldModel(type, field)),
    nested: (type.nestedArray ?? [])
      .filter((nested) => isMessage(nested) || isEnum(nested))
      .map((nested) => modelOf(nested as ReflectedType | ReflectedEnum)),
    reserved: (type.reserved ?? []).map((entry) =>
      typeof entry === 'string' ? entry : ([entry[0]!, entry[1] ?? entry[0]!] as const),
    ),
  });

  const fieldModel = (type: ReflectedType, field: ReflectedField): ProtoField => {
    const where = `${plain(type.fullName)}.${field.name}`;
    if (field.rule === 'required') {
      throw new TypeError(
        `${label}: ${where} is a proto2 required field, which proto3 cannot say: make it optional in the .proto`,
      );
    }
    const resolved = field.resolvedType;
    const typeName = isMessage(resolved) || isEnum(resolved) ? nameOf(resolved) : field.type;
    if (!(isMessage(resolved) || isEnum(resolved)) && !PROTO_SCALARS.has(typeName)) {
      throw new TypeError(
        `${label}: ${where} has the type ${field.type}, which the protobuf root cannot resolve`,
      );
    }
    const synthetic = field.options?.['proto3_optional'] === true;
    const oneof =
      field.partOf != null && !synthetic && field.partOf.options?.['proto3_optional'] !== true
        ? field.partOf.name
        : undefined;
    return {
      name: field.name,
      id: field.id,
      type: typeName,
      label:
        field.map === true
          ? undefined
          : field.repeated === true || field.rule === 'repeated'
            ? 'repeated'
            : synthetic
              ? 'optional'
              : undefined,
      keyType: field.map === true ? field.keyType : undefined,
      oneof,
      unpacked: field.options?.['packed'] === false ? true : undefined,
    };
  };

  const enumModel = (type: ReflectedEnum): ProtoEnum => {
    const values = Object.entries(type.values).map(([name, number]) => ({ name, number }));
    if (values[0]?.number !== 0) {
      throw new TypeError(
        `${label}: the enum ${plain(type.fullName)} does not start with a value 0, which proto3 requires: add one (e.g. ${type.name.toUpperCase()}_UNSPECIFIED = 0) first`,
      );
    }
    const numbers = new Set(values.map((value) => value.number));
    return {
      kind: 'enum',
      name: type.name,
      values,
      allowAlias: numbers.size < values.length || type.options?.['allow_alias'] === true ? true : undefined,
    };
  };

  return {
    package: packageName,
    service: service.name,
    rpcs,
    types: [...reached.values()].map(modelOf),
    imports: [...imports].sort(),
  };
}
