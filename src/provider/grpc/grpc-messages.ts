/**
 * How one method's messages are written on the gRPC entry, by the request's content type
 * (docs/grpc.md, "Message formats"):
 *
 * - `application/grpc` and `application/grpc+proto`: Protocol Buffers, for a service declared with
 *   `defineService(name, { protobuf })` (serialization/protobuf.ts): the request message holds the
 *   arguments in field order, the response message is the result; each message of a stream is one
 *   message of the rpc's request (in) or response (out) type;
 * - `application/grpc+json`: any service; a request is the JSON array of the arguments (as on the
 *   HTTP/JSON entry), a response the result's JSON, each message of a stream one JSON value, in the
 *   app's json serializer (its decode limits included).
 */
import { messageOf } from '../../core/rpc-error.js';
import type { DecodeLimits } from '../../serialization/decode-limits.js';
import { decodeBody } from '../../serialization/decode-limits.js';
import type { ProtobufBinding } from '../../serialization/protobuf.js';
import type { Serializer } from '../../serialization/serializer.js';
import type { ServiceDefinition } from '../../service/define-service.js';

/** The subtypes of `application/grpc` served. */
export type GrpcFormat = 'proto' | 'json';

/** One method's messages in one format. */
export interface GrpcMessages {
  readonly format: GrpcFormat;
  /** The request's arguments (measured, then decoded, by the provider chain) and the unary answer. */
  readonly bodies: Serializer;
  /** One message of the consumer's stream (client and two-way streams). */
  decodeInput(bytes: Uint8Array): unknown;
  /** One message of the handler's stream, or a unary or client-stream result. */
  encodeOutput(value: unknown): Uint8Array;
}

/** The content type answers are written with for `format`. */
export function contentTypeOf(format: GrpcFormat): string {
  return format === 'proto' ? 'application/grpc+proto' : 'application/grpc+json';
}

export interface GrpcMessagesInit {
  readonly definition: ServiceDefinition<unknown>;
  readonly method: string;
  readonly format: GrpcFormat;
  /** The app's json serializer. */
  readonly json: Serializer;
  /** The provider view of the protobuf serializer (serialization/protobuf.ts `forMethod`). */
  readonly protobuf: Serializer;
  readonly limits: DecodeLimits;
}

/** The method's messages, or an Error saying why the format cannot carry them. */
export function grpcMessagesOf(init: GrpcMessagesInit): GrpcMessages | Error {
  const { definition, method, format, json, limits } = init;
  if (format === 'json') {
    return {
      format,
      bodies: json,
      decodeInput: (bytes) => decodeBody(json, bytes, limits),
      encodeOutput: (value) => json.encode(value === undefined ? null : value),
    };
  }
  const codec = (definition as { protobuf?: ProtobufBinding }).protobuf?.method(method);
  if (codec === undefined) {
    return new Error(
      `${definition.name}.${method} declares no protobuf messages (defineService({ protobuf })): call it with content-type application/grpc+json`,
    );
  }
  let bodies: Serializer;
  try {
    bodies = init.protobuf.forMethod!(definition, method, 'provider');
  } catch (error) {
    return new Error(messageOf(error));
  }
  return {
    format,
    bodies,
    decodeInput: (bytes) => codec.decodeMessage(bytes, limits),
    encodeOutput: (value) => codec.encodeResult(value),
  };
}
