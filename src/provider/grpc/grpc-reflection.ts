/**
 * gRPC server reflection, `grpc.reflection.v1.ServerReflection` and its older twin `v1alpha` (the same
 * messages), so that grpcurl, Postman and similar tools can list the services and call them without
 * their `.proto`: `list_services` names every service declared with protobuf (and the health and
 * reflection services), `file_containing_symbol` and `file_by_filename` answer FileDescriptorProtos
 * built from the application's protobufjs Root (proto-descriptors.ts), with the files they depend on.
 * Extensions are not served (`NOT_FOUND`). Messages are written by hand (protocol/grpc/proto-wire.ts).
 */

import {
  type ProtoField,
  ProtoWriter,
  readProtoFields,
  stringField,
} from '../../protocol/grpc/proto-wire.js';
import { GrpcStatus } from '../../protocol/grpc/status.js';
import type { ProtobufBinding } from '../../serialization/protobuf.js';
import type { GrpcBuiltin } from './grpc-call.js';
import { HEALTH_SERVICE } from './grpc-health.js';
import type { GrpcRoutes } from './grpc-routes.js';
import { buildDescriptorFiles, type DescriptorFiles } from './proto-descriptors.js';

export interface GrpcReflection {
  readonly methods: ReadonlyMap<string, GrpcBuiltin>;
}

const V1 = 'grpc.reflection.v1.ServerReflection';
const V1ALPHA = 'grpc.reflection.v1alpha.ServerReflection';

export function createGrpcReflection(routes: GrpcRoutes, healthServed: boolean): GrpcReflection {
  let built: { version: string; files: DescriptorFiles; services: string[] } | undefined;
  const current = () => {
    const names = routes.names();
    const key = names.join(',');
    if (built?.version === key) return built;
    const reflected: unknown[] = [];
    const services: string[] = [];
    for (const name of names) {
      const exported = routes.servicesNamed(name)[0];
      const binding = (exported?.definition as { protobuf?: ProtobufBinding } | undefined)?.protobuf;
      if (binding === undefined || binding.protoService !== name) continue;
      reflected.push(binding.reflected);
      services.push(name);
    }
    built = { version: key, files: buildDescriptorFiles(reflected), services };
    return built;
  };

  /** The file and, depth first, every file it depends on. */
  const withDependencies = (files: DescriptorFiles, name: string): Buffer[] => {
    const out: Buffer[] = [];
    const seen = new Set<string>();
    const add = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const bytes = files.files.get(file);
      if (bytes === undefined) return;
      out.push(bytes);
      for (const dep of files.dependencies.get(file) ?? []) add(dep);
    };
    add(name);
    return out;
  };

  const notFound = (what: string): Buffer =>
    new ProtoWriter().uint(1, GrpcStatus.NOT_FOUND).bytes(2, `${what} not found`).finish();

  const answer = (request: Buffer, fields: readonly ProtoField[]): Buffer => {
    const response = new ProtoWriter().bytes(1, stringField(fields, 1)).bytes(2, request);
    const { files, services } = current();
    const field = fields.find((f) => f.field >= 3 && f.field <= 7);
    const text = field?.bytes.toString('utf8') ?? '';
    if (field?.field === 7) {
      const list = new ProtoWriter();
      const names = [...services, ...(healthServed ? [HEALTH_SERVICE] : []), V1, V1ALPHA];
      for (const name of names) list.bytes(1, new ProtoWriter().bytes(1, name).finish());
      return response.bytes(6, list.finish()).finish();
    }
    let file: string | undefined;
    if (field?.field === 3) file = files.files.has(text) ? text : undefined;
    else if (field?.field === 4) file = files.symbols.get(text);
    if (file === undefined) {
      return response.bytes(7, notFound(field?.field === 3 ? `file ${text}` : `symbol ${text}`)).finish();
    }
    const found = new ProtoWriter();
    for (const bytes of withDependencies(files, file)) found.bytes(1, bytes);
    return response.bytes(4, found.finish()).finish();
  };

  const info: GrpcBuiltin = (call) => {
    call.exchange.start();
    call.onMessage((bytes) => {
      let fields: ProtoField[];
      try {
        fields = readProtoFields(bytes);
      } catch {
        call.exchange.end({
          status: GrpcStatus.INVALID_ARGUMENT,
          message: 'malformed ServerReflectionRequest',
        });
        return;
      }
      call.exchange.send(answer(Buffer.from(bytes), fields));
    });
    call.onEnd(() => call.exchange.end({ status: GrpcStatus.OK }));
  };

  return {
    methods: new Map([
      [`/${V1}/ServerReflectionInfo`, info],
      [`/${V1ALPHA}/ServerReflectionInfo`, info],
    ]),
  };
}
