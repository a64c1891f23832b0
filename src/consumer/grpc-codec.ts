/**
 * A method as the gRPC consumer sends it (grpc-connection.ts): its path, its content type, and how its
 * messages are written and read. Two forms:
 *
 * - **protobuf**, for a service whose definition declares its messages (`defineService(name, { protobuf:
 *   root })`): `content-type: application/grpc`, the path `/<package.Service>/<method>` (the service's
 *   full name in the `.proto`), the request message made from the arguments and the result read from
 *   the response message by the mapping serialization/protobuf.ts documents (the HTTP entry's);
 *   a client or two-way stream's messages are request messages, a server stream's response messages.
 * - **JSON**, for any other service: `content-type: application/grpc+json`, the path
 *   `/<service>/<method>` (the definition's name), a unary or server-stream request is the arguments
 *   as one JSON array (`[7]` for `getUser(7)`), a response message the result as JSON (an absent or
 *   empty message is `undefined`), a stream message one value as JSON; JSON in the app's `json`
 *   serializer (plain JSON for plain values; dates, bigints, maps and the like tagged as it tags them).
 *
 * Every response message is measured against `maxDecodedElements` before it is decoded.
 */

import { decodeBody, measureBody } from '../serialization/decode-limits.js';
import type { ProtobufBinding, ProtobufMethodCodec } from '../serialization/protobuf.js';
import type { Serializer } from '../serialization/serializer.js';
import { namesOf } from './http-exchange.js';
import type { WireRoute } from './pending-call.js';

export const GRPC_PROTO_CONTENT_TYPE = 'application/grpc';
export const GRPC_JSON_CONTENT_TYPE = 'application/grpc+json';

export interface GrpcMethodCodec {
  /** `/<service>/<method>`. */
  readonly path: string;
  readonly contentType: string;
  /** The request message of a unary call or a server stream: the arguments. */
  encodeArgs(args: readonly unknown[]): Uint8Array;
  /** One message of a client or two-way stream. */
  encodeMessage(value: unknown): Uint8Array;
  /** One response message (measured first: throws over `maxElements`). */
  decodeMessage(bytes: Uint8Array, maxElements: number): unknown;
}

const codecs = new WeakMap<WireRoute, GrpcMethodCodec>();

/** The gRPC form of `route`'s method, made once per route. */
export function grpcCodecOf(route: WireRoute, json: Serializer): GrpcMethodCodec {
  let codec = codecs.get(route);
  if (codec === undefined) {
    codec = makeCodec(route, json);
    codecs.set(route, codec);
  }
  return codec;
}

function makeCodec(route: WireRoute, json: Serializer): GrpcMethodCodec {
  const { service, method } = namesOf(route);
  const binding = (route as { readonly service?: { readonly protobuf?: ProtobufBinding } }).service?.protobuf;
  const proto = binding?.method(method);
  if (binding !== undefined && proto !== undefined) return protobufCodec(binding.protoName, method, proto);
  return {
    path: `/${service}/${method}`,
    contentType: GRPC_JSON_CONTENT_TYPE,
    encodeArgs: (args) => json.encode(args),
    encodeMessage: (value) => json.encode(value),
    decodeMessage(bytes, maxElements) {
      if (bytes.length === 0) return undefined;
      const limits = { maxElements };
      measureBody(json, bytes, limits);
      return decodeBody(json, bytes, limits);
    },
  };
}

function protobufCodec(service: string, method: string, proto: ProtobufMethodCodec): GrpcMethodCodec {
  return {
    path: `/${service}/${method}`,
    contentType: GRPC_PROTO_CONTENT_TYPE,
    encodeArgs: (args) => proto.encodeArgs(args),
    encodeMessage: (value) => proto.encodeRequestMessage(value),
    decodeMessage: (bytes, maxElements) => proto.decodeResult(bytes, { maxElements }),
  };
}
