/**
 * The rpcs and messages of a service defined in TypeScript with schemas (`args`, `returns`): each
 * method's JSON Schema (json-schema-of.ts) mapped to proto3 (docs/schemas.md, "From schemas"):
 *
 * | JSON Schema | proto3 |
 * |---|---|
 * | `string` (also a `const` string) | `string` |
 * | `number` | `double` |
 * | `integer` within ±2^31 (`z.int32()`, `.min()`/`.max()` inside it) | `int32`; any other `integer` (`z.number().int()`) `int64` |
 * | `boolean` | `bool` |
 * | `array` of one type | `repeated` (a list of lists is refused) |
 * | `object` with `properties` | a message, its fields in property order (numbers from 1), nested in the message that uses it; a shared `$defs` entry (`.meta({ id })`) a top-level message of that name |
 * | `object` with only `additionalProperties` (`z.record(z.string(), v)`) | `map<string, v>` |
 * | `enum` of strings (identifiers) | an enum nested where it is used, the values as they are, the first one 0 |
 * | a property not `required`, or `X \| null` | `optional` (scalars and enums; a message field has presence anyway) |
 *
 * The request message (`<Method>Request`) holds the parameters, in order: the tuple's items
 * (`z.tuple([...])`), named by their `title` (`z.string().meta({ title: 'name' })`) or `arg1`, `arg2`...;
 * none is `google.protobuf.Empty`. The response is `returns`: an object is the response message
 * (`<Method>Response`, or its `$defs` name), nothing (`z.void()`, `z.null()`) is `google.protobuf.Empty`,
 * anything else is wrapped in `<Method>Response { <type> value = 1; }` (protobuf.ts' mapping). A server
 * stream's `returns` is one message. What cannot be mapped (a union, `any`, a Date, a tuple inside a
 * value, a list of lists, a method without `args`/`returns`, a client or two-way stream) throws a
 * TypeError naming the method, the path (`args[1].tags[]`) and what to do.
 */
import { type JsonSchema, jsonSchemaOf, UNREPRESENTABLE, VOID } from '../json-schema-of.js';
import type { ProtoEnum, ProtoField, ProtoMessage, ProtoRpc } from './proto-model.js';
import { EMPTY_TYPE, PROTO_IDENTIFIER, pascalCase, wellKnownImport } from './proto-names.js';

type Schema = { readonly [key: string]: unknown };

/** What is read of a method's declaration (define-service.ts' MethodDeclaration). */
export interface SchemaMethod {
  readonly args?: unknown;
  readonly returns?: unknown;
  readonly stream?: string | undefined;
}

export interface SchemaProto {
  readonly rpcs: readonly ProtoRpc[];
  readonly types: ReadonlyArray<ProtoMessage | ProtoEnum>;
  readonly imports: readonly string[];
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** A field's type as the builder found it. */
interface FieldType {
  readonly type: string;
  readonly repeated?: boolean;
  readonly keyType?: string;
  /** Whether the value may be null (then `optional`). */
  readonly nullable?: boolean;
  /** A message type (presence without `optional`). */
  readonly message?: boolean;
}

/** Where nested declarations of the message being built go, and the names they took. */
interface Scope {
  readonly nested: Array<ProtoMessage | ProtoEnum>;
  readonly names: Set<string>;
}

export function protoFromSchemas(
  service: string,
  methods: Readonly<Record<string, SchemaMethod>> | undefined,
): SchemaProto {
  if (methods === undefined || Object.keys(methods).length === 0) {
    throw new TypeError(
      `${service}: declares no methods: declare them with their schemas (defineService(name, { methods: { m: { args: z.tuple([...]), returns: ... } } })) or the service's protobuf messages (defineService(name, { protobuf: root }))`,
    );
  }
  const imports = new Set<string>();
  /** Top-level declarations by name, with their text to tell a repeated one from a clash. */
  const topLevel = new Map<string, { model: ProtoMessage | ProtoEnum; text: string }>();
  const topNames = new Set<string>();
  const reserveTop = (wanted: string): string => {
    let name = wanted;
    for (let n = 2; topNames.has(name); n++) name = `${wanted}${n}`;
    topNames.add(name);
    return name;
  };
  const addTop = (model: ProtoMessage | ProtoEnum): string => {
    topLevel.set(model.name, { model, text: JSON.stringify(model) });
    return model.name;
  };
  const useImport = (type: string): string => {
    imports.add(wellKnownImport(type)!);
    return type;
  };
  const rpcs: ProtoRpc[] = [];

  for (const [method, declaration] of Object.entries(methods)) {
    const label = `${service}.${method}`;
    const fail = (path: string, problem: string, fix: string): never => {
      throw new TypeError(`${label}: ${path}: ${problem}; ${fix}`);
    };
    const kind = declaration.stream;
    if (kind === 'client' || kind === 'bidi') {
      fail(
        'stream',
        `a ${kind} stream's messages cannot be read from its argument schema`,
        "declare the service's .proto (defineService(name, { protobuf: root }))",
      );
    }
    if (declaration.args === undefined) {
      fail(
        'args',
        'declares no argument schema',
        "declare args: z.tuple([...]) (and returns), or the service's protobuf messages",
      );
    }
    if (declaration.returns === undefined) {
      fail(
        'returns',
        'declares no result schema',
        "declare returns: a schema of the result (z.void() for none), or the service's protobuf messages",
      );
    }
    const readSchema = (schema: unknown, io: 'input' | 'output', path: string): Schema => {
      let json: JsonSchema | undefined;
      try {
        json = jsonSchemaOf(schema, io);
      } catch (error) {
        return fail(
          path,
          `its schema cannot be written as JSON Schema (${(error as Error).message})`,
          'change the schema',
        );
      }
      if (json === undefined) {
        return fail(
          path,
          'its schema offers no JSON Schema (Standard JSON Schema)',
          "use a library that implements it (zod 4.2+), or declare the service's protobuf messages",
        );
      }
      return json === true ? {} : json === false ? { not: {} } : json;
    };

    /** Messages built from one JSON Schema document: its `$defs` entries by name, `#` its root. */
    const documentBuilder = (document: Schema, documentPath: string) => {
      const defs = (document['$defs'] ?? {}) as Record<string, Schema>;
      const defNames = new Map<string, string>();

      const defMessage = (ref: string, path: string): FieldType => {
        if (ref === '#') {
          const root = defNames.get('#');
          if (root === undefined)
            return fail(path, 'refers to the whole argument list', 'give the type a name of its own');
          return { type: root, message: true };
        }
        const key = /^#\/\$defs\/(.+)$/.exec(ref)?.[1];
        const def = key === undefined ? undefined : defs[key];
        if (key === undefined || def === undefined) {
          return fail(path, `refers to ${ref}, which the schema does not define`, 'inline the type');
        }
        const known = defNames.get(key);
        if (known !== undefined) return { type: known, message: !isEnumSchema(def) };
        if (!isObjectSchema(def) && !isEnumSchema(def)) {
          // a named scalar, list or map is used where it stands
          return typeOf(def, path, { nested: [], names: new Set() }, key);
        }
        const build = (name: string) =>
          isEnumSchema(def) ? enumOf(def, name, `$defs.${key}`) : messageOf(def, name, `$defs.${key}`);
        // the same type from another method's document (the same name and, built under that name, the
        // same declaration: a recursive type refers to itself by it) is written once
        const wanted = pascalCase(key);
        for (let n = 1; ; n++) {
          const candidate = topLevel.get(n === 1 ? wanted : `${wanted}${n}`);
          if (candidate === undefined) break;
          defNames.set(key, candidate.model.name);
          if (JSON.stringify(build(candidate.model.name)) === candidate.text) {
            return { type: candidate.model.name, message: candidate.model.kind === 'message' };
          }
        }
        const name = reserveTop(wanted);
        defNames.set(key, name);
        const model = build(name);
        addTop(model);
        return { type: name, message: model.kind === 'message' };
      };

      const enumOf = (schema: Schema, name: string, path: string): ProtoEnum => {
        const values = schema['enum'] as unknown[];
        const seen = new Set<string>();
        for (const value of values) {
          if (typeof value !== 'string' || !PROTO_IDENTIFIER.test(value) || seen.has(value)) {
            fail(
              path,
              `the enum value ${JSON.stringify(value)} is not a protobuf identifier (letters, digits, _) or is repeated`,
              'use identifiers as enum values, or a plain string',
            );
          }
          seen.add(value as string);
        }
        return {
          kind: 'enum',
          name,
          values: values.map((value, number) => ({ name: value as string, number })),
        };
      };

      const messageOf = (schema: Schema, name: string, path: string): ProtoMessage => {
        const properties = (schema['properties'] ?? {}) as Record<string, Schema>;
        const required = new Set((schema['required'] ?? []) as string[]);
        const scope: Scope = { nested: [], names: new Set(Object.keys(properties)) };
        const fields = Object.entries(properties).map(([property, value], index): ProtoField => {
          const where = `${path}.${property}`;
          if (!PROTO_IDENTIFIER.test(property)) {
            fail(
              where,
              `the property name ${JSON.stringify(property)} is not a protobuf field name`,
              'use letters, digits and _',
            );
          }
          return fieldOf(property, index + 1, typeOf(value, where, scope, property), !required.has(property));
        });
        return { kind: 'message', name, fields, nested: scope.nested };
      };

      /** The type of a value at `path`; nested messages and enums go into `scope`, named after `field`. */
      const typeOf = (raw: unknown, path: string, scope: Scope, field: string): FieldType => {
        const schema = (raw === true ? {} : raw) as Schema;
        if (typeof schema !== 'object' || schema === null)
          return fail(path, 'accepts nothing', 'give it a type');
        if (schema[UNREPRESENTABLE] !== undefined) {
          return fail(
            path,
            `${String(schema[UNREPRESENTABLE])}`,
            "use a JSON type (a string, a number, an object) or declare the service's protobuf messages",
          );
        }
        if (schema[VOID] === true)
          return fail(path, 'is undefined', 'leave the value out (optional) or use null');
        if (typeof schema['$ref'] === 'string') return defMessage(schema['$ref'], path);
        const union = (schema['anyOf'] ?? schema['oneOf']) as Schema[] | undefined;
        if (union !== undefined) {
          const others = union.filter((branch) => branch['type'] !== 'null');
          if (others.length === 1 && union.length === 2)
            return { ...typeOf(others[0], path, scope, field), nullable: true };
          return fail(
            path,
            'a union cannot be written as protobuf',
            'use one type, or an object with optional fields',
          );
        }
        if (schema['allOf'] !== undefined)
          return fail(path, 'an intersection (allOf) cannot be written as protobuf', 'use one object type');
        let type = schema['type'];
        if (Array.isArray(type)) {
          const others = type.filter((each) => each !== 'null');
          if (others.length !== 1)
            return fail(
              path,
              `a value of several types (${type.join(', ')}) cannot be written as protobuf`,
              'use one type',
            );
          type = others[0];
          if (others.length < (schema['type'] as unknown[]).length) {
            return { ...typeOf({ ...schema, type }, path, scope, field), nullable: true };
          }
        }
        if (isEnumSchema(schema)) {
          const name = nestedName(scope, field, 'Enum');
          scope.nested.push(enumOf(schema, name, path));
          return { type: name };
        }
        if (schema['enum'] !== undefined)
          return fail(
            path,
            'an enum of other values than strings cannot be written as protobuf',
            'use strings',
          );
        if (type === undefined && schema['properties'] !== undefined) type = 'object';
        switch (type) {
          case 'string':
            return { type: 'string' };
          case 'number':
            return { type: 'double' };
          case 'integer': {
            const min = schema['minimum'];
            const max = schema['maximum'];
            const narrow =
              typeof min === 'number' && typeof max === 'number' && min >= INT32_MIN && max <= INT32_MAX;
            return { type: narrow ? 'int32' : 'int64' };
          }
          case 'boolean':
            return { type: 'bool' };
          case 'array': {
            if (schema['prefixItems'] !== undefined) {
              return fail(path, 'a tuple cannot be written as protobuf', 'use an object with named fields');
            }
            if (schema['items'] === undefined)
              return fail(
                `${path}[]`,
                'a list of any value cannot be written as protobuf',
                'give its items a type',
              );
            const item = typeOf(schema['items'], `${path}[]`, scope, field);
            if (item.repeated === true || item.keyType !== undefined) {
              return fail(
                `${path}[]`,
                'a list of lists (or of maps) cannot be written as protobuf',
                'wrap the inner list in an object',
              );
            }
            return { type: item.type, repeated: true, message: item.message };
          }
          case 'object': {
            const extra = schema['additionalProperties'];
            if (schema['properties'] === undefined && typeof extra === 'object' && extra !== null) {
              const names = schema['propertyNames'] as Schema | undefined;
              if (names !== undefined && names['type'] !== 'string') {
                return fail(
                  path,
                  'a map whose keys are not strings cannot be written as protobuf',
                  'key it by strings',
                );
              }
              const value = typeOf(extra, `${path}{}`, scope, field);
              if (value.repeated === true || value.keyType !== undefined) {
                return fail(
                  `${path}{}`,
                  'a map of lists (or of maps) cannot be written as protobuf',
                  'wrap the value in an object',
                );
              }
              return { type: value.type, keyType: 'string', message: value.message };
            }
            const name = nestedName(scope, field, 'Message');
            scope.nested.push(messageOf(schema, name, path));
            return { type: name, message: true };
          }
          case 'null':
            return fail(
              path,
              'a value that is always null cannot be written as protobuf',
              'leave the field out',
            );
          default:
            return fail(
              path,
              'a value of any type cannot be written as protobuf',
              'give it a type (a string, a number, an object...)',
            );
        }
      };

      return { defNames, messageOf, typeOf, fail, documentPath };
    };

    // the request: the parameters, in order
    const args = readSchema(declaration.args, 'input', 'args');
    const items = args['prefixItems'] as unknown[] | undefined;
    if (args['type'] !== 'array' || (items === undefined && args['maxItems'] !== 0)) {
      fail(
        'args',
        'is not a tuple of the parameters',
        'declare args: z.tuple([...]), one schema per parameter',
      );
    }
    if (args['items'] !== undefined && args['items'] !== false) {
      fail(
        'args',
        'takes any number of further arguments (a rest element)',
        'declare every parameter in the tuple',
      );
    }
    const minItems = typeof args['minItems'] === 'number' ? args['minItems'] : 0;
    let request: string;
    if (items === undefined || items.length === 0) request = useImport(EMPTY_TYPE);
    else {
      const builder = documentBuilder(args, 'args');
      const name = reserveTop(`${pascalCase(method)}Request`);
      const scope: Scope = { nested: [], names: new Set() };
      const fields = items.map((item, index) => {
        const title = (item as Schema)['title'];
        const parameter =
          typeof title === 'string' && PROTO_IDENTIFIER.test(title) ? title : `arg${index + 1}`;
        scope.names.add(parameter);
        const type = builder.typeOf(item, `args[${index}]`, scope, parameter);
        return fieldOf(parameter, index + 1, type, index >= minItems);
      });
      request = addTop({ kind: 'message', name, fields, nested: scope.nested });
    }

    // the response: the result (a server stream: each message)
    const result = readSchema(declaration.returns, 'output', 'returns');
    let response: string;
    if (result[VOID] === true || result['type'] === 'null') response = useImport(EMPTY_TYPE);
    else {
      const builder = documentBuilder(result, 'returns');
      const wanted = `${pascalCase(method)}Response`;
      if (isObjectSchema(result)) {
        const name = reserveTop(wanted);
        builder.defNames.set('#', name);
        const model = builder.messageOf(result, name, 'returns');
        response = addTop(model);
        checkNotWrapped(model, 'returns', builder.fail);
      } else {
        const scope: Scope = { nested: [], names: new Set(['value']) };
        const type = builder.typeOf(result, 'returns', scope, 'value');
        const model = topLevel.get(type.type)?.model;
        if (
          type.message === true &&
          type.repeated !== true &&
          type.keyType === undefined &&
          model?.kind === 'message'
        ) {
          // a named object ($defs) is the response message itself
          checkNotWrapped(model, 'returns', builder.fail);
          response = type.type;
        } else {
          const name = reserveTop(wanted);
          response = addTop({
            kind: 'message',
            name,
            fields: [fieldOf('value', 1, type, false)],
            nested: scope.nested,
          });
        }
      }
    }
    rpcs.push({ name: method, request, response, requestStream: false, responseStream: kind === 'server' });
  }
  return { rpcs, types: [...topLevel.values()].map((entry) => entry.model), imports: [...imports].sort() };
}

function fieldOf(name: string, id: number, type: FieldType, optional: boolean): ProtoField {
  const repeatedOrMap = type.repeated === true || type.keyType !== undefined;
  return {
    name,
    id,
    type: type.type,
    keyType: type.keyType,
    label:
      type.repeated === true
        ? 'repeated'
        : !repeatedOrMap && type.message !== true && (optional || type.nullable === true)
          ? 'optional'
          : undefined,
  };
}

/** A response message whose one field is `value` would be read as a wrapped result (protobuf.ts). */
function checkNotWrapped(
  model: ProtoMessage | ProtoEnum,
  path: string,
  fail: (path: string, problem: string, fix: string) => never,
): void {
  if (model.kind === 'message' && model.fields.length === 1 && model.fields[0]!.name === 'value') {
    fail(
      path,
      'an object whose only field is named value reads as a wrapped result (a message of one field value carries a result that is not an object)',
      'rename the field, or return the value itself',
    );
  }
}

function isObjectSchema(schema: Schema): boolean {
  return (
    (schema['type'] === 'object' || (schema['type'] === undefined && schema['properties'] !== undefined)) &&
    !(schema['properties'] === undefined && typeof schema['additionalProperties'] === 'object')
  );
}

function isEnumSchema(schema: Schema): boolean {
  const values = schema['enum'];
  return Array.isArray(values) && values.length > 0 && values.every((value) => typeof value === 'string');
}

/** A nested type's name for the field `field`: its PascalCase, unless a field or type has it already. */
function nestedName(scope: Scope, field: string, suffix: string): string {
  let name = pascalCase(field);
  if (scope.names.has(name)) name = `${name}${suffix}`;
  for (let n = 2; scope.names.has(name); n++) name = `${pascalCase(field)}${suffix}${n}`;
  scope.names.add(name);
  return name;
}
