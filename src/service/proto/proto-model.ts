/**
 * What a `.proto` file written by `exportProto` holds (service/proto/export-proto.ts): one package, one
 * service, the messages and enums its rpcs reach, and the well-known types it imports. Both sources (a
 * protobufjs reflection, argument schemas) are turned into this model; proto-render.ts writes it.
 */

/** A field's type: a scalar's name (`int32`, `string`, ...) or a message or enum's name as the file writes it. */
export interface ProtoField {
  readonly name: string;
  readonly id: number;
  readonly type: string;
  /** `repeated`, or proto3 `optional` (explicit presence); none for a plain singular field. */
  readonly label?: 'repeated' | 'optional' | undefined;
  /** A map field: its key type (`type` is the value's). */
  readonly keyType?: string | undefined;
  /** The name of the (real) oneof it belongs to. */
  readonly oneof?: string | undefined;
  /** `[packed = false]` on a repeated scalar. */
  readonly unpacked?: boolean | undefined;
}

export interface ProtoEnum {
  readonly kind: 'enum';
  readonly name: string;
  /** In declaration order; the first is 0. */
  readonly values: ReadonlyArray<{ readonly name: string; readonly number: number }>;
  readonly allowAlias?: boolean | undefined;
}

export interface ProtoMessage {
  readonly kind: 'message';
  readonly name: string;
  readonly fields: readonly ProtoField[];
  /** Messages and enums declared inside it. */
  readonly nested: ReadonlyArray<ProtoMessage | ProtoEnum>;
  /** Reserved field numbers (inclusive ranges) and names. */
  readonly reserved?: ReadonlyArray<readonly [number, number] | string> | undefined;
}

export interface ProtoRpc {
  readonly name: string;
  readonly request: string;
  readonly response: string;
  readonly requestStream: boolean;
  readonly responseStream: boolean;
}

export interface ProtoFile {
  /** The package (`example` of `example.UserService`); '' for none. */
  readonly package: string;
  readonly service: { readonly name: string; readonly rpcs: readonly ProtoRpc[] };
  /** Top-level messages and enums, in the order they were reached. */
  readonly types: ReadonlyArray<ProtoMessage | ProtoEnum>;
  /** Imported files (`google/protobuf/empty.proto`), sorted. */
  readonly imports: readonly string[];
  /** Comment lines written at the top (what the file is for, the gRPC paths). */
  readonly header: readonly string[];
}
