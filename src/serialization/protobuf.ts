/**
 * Protocol Buffers bodies for services whose definition declares their message types
 * (`defineService(name, { protobuf: root })`, docs/http.md "Protocol Buffers"). Callisto does not depend
 * on protobufjs: the application loads its `.proto` (or reflection JSON) with protobufjs and passes the
 * `Root`; this module only uses the reflection objects' own methods.
 *
 * ## Mapping
 *
 * The `.proto` declares the service with the definition's name (`package example; service UserService`
 * for `example.UserService`, or the name given as `protobuf: { root, service }`), one `rpc` per method:
 *
 * - **request**: the rpc's request message holds the method's parameters, in field-number order: the
 *   first field is the first argument, and so on (`getUser(id)` ↔ `message GetUserRequest { int32 id = 1; }`).
 *   A method taking one object takes a request message with one field of that message type.
 * - **response**: the rpc's response message is the method's result as an object
 *   (`rpc getUser (GetUserRequest) returns (User)`). A response message without fields
 *   (`google.protobuf.Empty` or `message Empty {}`) is a method that returns nothing; one whose only
 *   field is named `value` carries a result that is not an object (`message SayReply { string value = 1; }`).
 *
 * Decoded messages become plain objects with every field present (defaults included), enums as their
 * names, 64-bit integers as decimal strings, bytes as `Buffer`s. Decoding refuses nesting deeper than
 * protobufjs' limit (100) and an own `__proto__` key in a map, and every body is scanned against its
 * message type before it is decoded (protobuf-scan.ts): one that would decode into more than
 * `maxDecodedElements` values (an empty sub-message is 2 bytes that become a default per field) is
 * refused before protobufjs builds anything.
 */
import type { ServiceKey } from '../core/service-key.js';
import { checkDecoded, DecodeLimitError, type DecodeLimits } from './decode-limits.js';
import { createJsonSerializer } from './json.js';
import { createProtobufScanner, type ScannedField } from './protobuf-scan.js';
import type { Serializer } from './serializer.js';

/** What Callisto reads of a protobufjs `Root` (structural: no import of protobufjs). */
export interface ProtobufRoot {
  lookupService(path: string): ProtobufService;
  lookupType(path: string): ProtobufType;
}

export interface ProtobufService {
  readonly fullName: string;
  readonly methods: Readonly<Record<string, { readonly requestType: string; readonly responseType: string }>>;
  lookupType?(path: string): ProtobufType;
}

export interface ProtobufType {
  readonly fullName: string;
  readonly fieldsArray: ReadonlyArray<ScannedField & { readonly name: string }>;
  encode(message: object): { finish(): Uint8Array };
  decode(bytes: Uint8Array): object;
  fromObject(object: object): object;
  toObject(message: object, options?: object): Record<string, unknown>;
}

/** What `defineService({ protobuf })` takes: a Root whose service has the definition's name, or another name. */
export type ProtobufDeclaration = ProtobufRoot | { readonly root: ProtobufRoot; readonly service: string };

/** One method's bodies in protobuf. */
export interface ProtobufMethodCodec {
  readonly requestType: string;
  readonly responseType: string;
  /** The arguments as the request message. */
  encodeArgs(args: readonly unknown[]): Uint8Array;
  /** The request message as the arguments; throws on malformed bytes or a limit. */
  decodeArgs(bytes: Uint8Array, limits: DecodeLimits): unknown[];
  /** The result as the response message (an empty message for `undefined`). */
  encodeResult(value: unknown): Uint8Array;
  /**
   * One message of a client or two-way stream as the request message (an object is the message; a
   * value that is not one goes in a request message whose only field is `value`), for the gRPC consumer.
   */
  encodeRequestMessage(value: unknown): Uint8Array;
  decodeResult(bytes: Uint8Array, limits: DecodeLimits): unknown;
  /**
   * One message of the request type as a stream carries it (the consumer's messages of a client or
   * two-way stream, over gRPC): the whole message as an object, or its `value` for a message whose only
   * field is `value`; measured against `limits` first.
   */
  decodeMessage(bytes: Uint8Array, limits: DecodeLimits): unknown;
  /** A value as one message of the request type (the inverse of `decodeMessage`). */
  encodeMessage(value: unknown): Uint8Array;
  /** Elements a request message decodes into, counted before decoding (protobuf-scan.ts); throws over `maxElements`. */
  measureArgs(bytes: Uint8Array, maxElements: number): number;
  /** Elements a response message decodes into, counted before decoding; throws over `maxElements`. */
  measureResult(bytes: Uint8Array, maxElements: number): number;
}

/** A service's protobuf binding: its methods' codecs, checked against the definition once. */
export interface ProtobufBinding {
  readonly service: string;
  /** The service's full name in the `.proto` (`package.Service`): a gRPC path's first segment. */
  readonly protoName: string;
  /** The same name (the gRPC entry's spelling of it). */
  readonly protoService: string;
  /** The service as the Root declares it (protobufjs' reflection object): what gRPC reflection and `exportProto` read. */
  readonly reflected: ProtobufService;
  method(name: string): ProtobufMethodCodec | undefined;
  /** `schemas`: made from the methods' `args`/`returns` schemas (service/proto/schema-root.ts), not declared. */
  readonly origin?: 'schemas' | undefined;
}

const TO_OBJECT = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
};

/**
 * Binds `declaration` to the service `serviceName` with the methods `methods` (undefined: every rpc of
 * the service). Throws a TypeError naming what is missing (the service, an rpc, a message type), so a
 * definition that does not match its `.proto` fails where it is defined.
 */
export function bindProtobuf(
  declaration: ProtobufDeclaration,
  serviceName: string,
  methods: readonly string[] | undefined,
): ProtobufBinding {
  // a protobufjs Root has a `root` getter of its own: tell the two forms apart by lookupService
  const named = typeof (declaration as Partial<ProtobufRoot>).lookupService !== 'function';
  const root = named ? (declaration as { root: ProtobufRoot }).root : (declaration as ProtobufRoot);
  const protoName = named ? (declaration as { service: string }).service : serviceName;
  let service: ProtobufService;
  try {
    service = root.lookupService(protoName);
  } catch (error) {
    throw new TypeError(
      `${serviceName}: the protobuf root declares no service ${protoName} (${(error as Error).message}); declare it in the .proto or name it with protobuf: { root, service }`,
    );
  }
  const names = methods ?? Object.keys(service.methods);
  const codecs = new Map<string, ProtobufMethodCodec>();
  for (const name of names) {
    const rpc = service.methods[name];
    if (rpc === undefined) {
      throw new TypeError(
        `${serviceName}.${name}: the protobuf service ${service.fullName.replace(/^\./, '')} has no rpc ${name} (it has ${Object.keys(service.methods).join(', ') || 'none'})`,
      );
    }
    const lookup = (type: string): ProtobufType => {
      try {
        return service.lookupType?.(type) ?? root.lookupType(type);
      } catch (error) {
        throw new TypeError(
          `${serviceName}.${name}: message type ${type} not found (${(error as Error).message})`,
        );
      }
    };
    codecs.set(
      name,
      methodCodec(`${serviceName}.${name}`, lookup(rpc.requestType), lookup(rpc.responseType)),
    );
  }
  return {
    service: serviceName,
    protoName: service.fullName.replace(/^\./, ''),
    protoService: service.fullName.replace(/^\./, ''),
    reflected: service,
    method: (name) => codecs.get(name),
  };
}

function methodCodec(label: string, request: ProtobufType, response: ProtobufType): ProtobufMethodCodec {
  const parameters = [...request.fieldsArray].sort((a, b) => a.id - b.id).map((field) => field.name);
  const returnsNothing = response.fieldsArray.length === 0;
  const wraps = (type: ProtobufType): boolean =>
    type.fieldsArray.length === 1 && type.fieldsArray[0]!.name === 'value';
  const wrapsValue = wraps(response);
  const requestWrapsValue = wraps(request);
  // fromObject converts what JSON-minded code holds (decimal strings or bigints for 64-bit fields, enum
  // names, base64 for bytes) and drops unknown properties
  const encode = (type: ProtobufType, object: object): Uint8Array =>
    type.encode(type.fromObject(withoutBigints(object))).finish();
  const requestScanner = createProtobufScanner(request);
  const responseScanner = createProtobufScanner(response);
  // a body is charged its length or what its scan counts, the larger: an empty sub-message is two
  // bytes that decode into a default for every field of its type, so the length alone bounds nothing
  const measure = (
    scanner: ReturnType<typeof createProtobufScanner>,
    bytes: Uint8Array,
    maxElements: number,
  ): number => {
    if (bytes.length > maxElements) {
      throw new DecodeLimitError(
        `a body of ${bytes.length} bytes may hold more than ${maxElements} elements (maxDecodedElements)`,
      );
    }
    return Math.max(bytes.length, scanner.scan(bytes, maxElements));
  };
  const decode = (type: ProtobufType, bytes: Uint8Array, limits: DecodeLimits): Record<string, unknown> => {
    // the framed and HTTP paths measured the body already (their views decode without a limit)
    if (limits.maxElements < Number.MAX_SAFE_INTEGER) {
      measure(type === request ? requestScanner : responseScanner, bytes, limits.maxElements);
    }
    const object = type.toObject(type.decode(bytes), TO_OBJECT);
    checkDecoded(object, limits);
    return object;
  };
  return {
    requestType: request.fullName.replace(/^\./, ''),
    responseType: response.fullName.replace(/^\./, ''),
    encodeArgs(args) {
      const message: Record<string, unknown> = {};
      parameters.forEach((name, index) => {
        if (args[index] !== undefined) message[name] = args[index];
      });
      return encode(request, message);
    },
    decodeArgs(bytes, limits) {
      const message = decode(request, bytes, limits);
      return parameters.map((name) => message[name]);
    },
    encodeResult(value) {
      if (wrapsValue) return encode(response, value === undefined || value === null ? {} : { value });
      if (value === undefined || value === null) return encode(response, {});
      if (typeof value !== 'object') {
        throw new TypeError(
          `${label}: the result must be an object for ${response.fullName.replace(/^\./, '')}`,
        );
      }
      return encode(response, value);
    },
    encodeRequestMessage(value) {
      if (value === undefined || value === null) return encode(request, {});
      const isObject = typeof value === 'object';
      if (requestWrapsValue && !(isObject && Object.hasOwn(value, 'value'))) {
        return encode(request, { value });
      }
      if (!isObject) {
        throw new TypeError(
          `${label}: a stream message must be an object for ${request.fullName.replace(/^\./, '')}`,
        );
      }
      return encode(request, value);
    },
    decodeResult(bytes, limits) {
      const message = decode(response, bytes, limits);
      return returnsNothing ? undefined : wrapsValue ? message['value'] : message;
    },
    decodeMessage(bytes, limits) {
      const message = decode(request, bytes, limits);
      return requestWrapsValue ? message['value'] : message;
    },
    encodeMessage(value) {
      if (requestWrapsValue) return encode(request, value === undefined || value === null ? {} : { value });
      if (value === undefined || value === null) return encode(request, {});
      if (typeof value !== 'object') {
        throw new TypeError(
          `${label}: a message must be an object for ${request.fullName.replace(/^\./, '')}`,
        );
      }
      return encode(request, value);
    },
    measureArgs: (bytes, maxElements) => measure(requestScanner, bytes, maxElements),
    measureResult: (bytes, maxElements) => measure(responseScanner, bytes, maxElements),
  };
}

/** A copy of `value` with bigints as decimal strings (protobufjs takes those for 64-bit fields). */
function withoutBigints(value: object): object {
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'bigint') {
      copy ??= { ...value };
      copy[key] = item.toString();
    }
  }
  return copy ?? value;
}

/** Wire id of the protobuf serializer (when an app registers it). */
export const PROTOBUF_SERIALIZER_ID = 4;

/**
 * The `protobuf` serializer of the framed protocol, for services whose definition declares their
 * messages: a call's request body is the method's request message, its answer the response message;
 * error answers travel in json (the consumer accepts them there). Not built in: an app registers it
 * (`callisto({ extend: (x) => x.register('serializer', 'protobuf', createProtobufSerializer()) })`) and a
 * reference asks for it (`serializer: 'protobuf'`). A call of a service without messages is refused.
 */
export function createProtobufSerializer(): Serializer {
  const json = createJsonSerializer();
  const views = new WeakMap<object, Map<string, Serializer>>();
  const unbound = (): never => {
    throw new TypeError('the protobuf serializer encodes only the bodies of a method (forMethod)');
  };
  const viewOf = (service: ServiceKey, method: string, side: 'consumer' | 'provider'): Serializer => {
    const codec = (service as { protobuf?: ProtobufBinding }).protobuf?.method(method);
    if (codec === undefined) {
      throw new TypeError(
        `${service.name}.${method} declares no protobuf messages: the protobuf serializer cannot carry it (defineService({ protobuf }))`,
      );
    }
    // bodies are measured (scanned against their message type) before decoding, every one of them:
    // even a small body may decode into more elements than it has bytes
    const limits = { maxElements: Number.MAX_SAFE_INTEGER };
    return side === 'consumer'
      ? {
          id: PROTOBUF_SERIALIZER_ID,
          name: 'protobuf',
          encode: (args) => codec.encodeArgs(args as unknown[]),
          decode: (bytes) => codec.decodeResult(bytes, limits),
          measure: (bytes, maxElements) => codec.measureResult(bytes, maxElements),
          measureEveryBody: true,
          errors: json,
        }
      : {
          id: PROTOBUF_SERIALIZER_ID,
          name: 'protobuf',
          encode: (value) => codec.encodeResult(value),
          decode: (bytes) => codec.decodeArgs(bytes, limits),
          measure: (bytes, maxElements) => codec.measureArgs(bytes, maxElements),
          measureEveryBody: true,
          errors: json,
        };
  };
  return {
    id: PROTOBUF_SERIALIZER_ID,
    name: 'protobuf',
    encode: unbound,
    decode: unbound,
    forMethod(service, method, side) {
      let byMethod = views.get(service);
      if (byMethod === undefined) {
        byMethod = new Map();
        views.set(service, byMethod);
      }
      const key = `${side}:${method}`;
      let view = byMethod.get(key);
      if (view === undefined) {
        view = viewOf(service, method, side);
        byMethod.set(key, view);
      }
      return view;
    },
  };
}

declare module '../extension/extension-names.js' {
  /** `protobuf`: a name apps register `createProtobufSerializer()` under (not built in). */
  interface SerializerNames {
    protobuf: true;
  }
}
