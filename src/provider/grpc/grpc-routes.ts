/**
 * Finds the method a gRPC request's `:path` names: `/<package.Service>/<Method>`, as gRPC clients build
 * it from the `.proto`. A service declared with protobuf is found by the `.proto`'s full service name
 * (which may differ from the Callisto name, `protobuf: { root, service }`) and by its Callisto name;
 * any other service by its Callisto name. The method is the Callisto method of that name, or of that
 * name with its first letter lowercased (`GetUser` → `getUser`, the usual `.proto` spelling).
 *
 * Version and group come from Dubbo 3 Triple's headers `tri-service-version` and `tri-service-group`;
 * without a version the one service of that name (and group) is meant, and several versions without
 * one named are refused, naming them. The lookup is rebuilt only when the service table changes.
 */
import { RpcError } from '../../core/rpc-error.js';
import { serviceKeyString } from '../../core/service-key.js';
import type { ProtobufBinding } from '../../serialization/protobuf.js';
import { type ExportedMethod, type ExportedService, methodOf, type ServiceTable } from '../service-table.js';

export const TRI_VERSION_HEADER = 'tri-service-version';
export const TRI_GROUP_HEADER = 'tri-service-group';

export interface GrpcTarget {
  readonly exported: ExportedService;
  readonly method: ExportedMethod;
}

export interface GrpcRoutes {
  /** The method `path` names for `version` (undefined: any one) in `group`; an RpcError when none. */
  find(path: string, version: string | undefined, group: string): GrpcTarget | RpcError;
  /** The gRPC service names served (reflection's list): the `.proto` name where there is one. */
  names(): string[];
  /** The services served under gRPC name `name`, every version and group. */
  servicesNamed(name: string): readonly ExportedService[];
}

/** The name gRPC clients use for `exported`: its `.proto` service's, else its Callisto name. */
export function grpcNameOf(exported: ExportedService): string {
  const binding = (exported.definition as { protobuf?: ProtobufBinding }).protobuf;
  return binding?.protoService ?? exported.definition.name;
}

export function createGrpcRoutes(table: ServiceTable): GrpcRoutes {
  let byName = new Map<string, ExportedService[]>();
  /** The methods found by path without a version or group header (the usual call), while the table holds. */
  let byPath = new Map<string, GrpcTarget>();
  let builtAt = -1;
  const index = (): Map<string, ExportedService[]> => {
    if (builtAt === table.version) return byName;
    byName = new Map();
    byPath = new Map();
    const add = (name: string, exported: ExportedService): void => {
      const list = byName.get(name);
      if (list === undefined) byName.set(name, [exported]);
      else if (!list.includes(exported)) list.push(exported);
    };
    for (const exported of table.list()) {
      if (!exported.servedOn.grpc) continue;
      add(grpcNameOf(exported), exported);
      add(exported.definition.name, exported);
    }
    builtAt = table.version;
    return byName;
  };

  const serviceOf = (
    name: string,
    version: string | undefined,
    group: string,
  ): ExportedService | RpcError => {
    const inGroup = (index().get(name) ?? []).filter((e) => e.definition.group === group);
    if (version !== undefined) {
      const exact = inGroup.find((e) => e.definition.version === version);
      if (exact !== undefined) return exact;
      return new RpcError(
        'ServiceNotFound',
        `service ${serviceKeyString({ name, version, group })} is not provided here`,
      );
    }
    if (inGroup.length === 1) return inGroup[0]!;
    if (inGroup.length === 0) {
      const where = group ? ` in group "${group}" (${TRI_GROUP_HEADER})` : '';
      return new RpcError('ServiceNotFound', `service ${name}${where} is not provided here`);
    }
    return new RpcError(
      'BadRequest',
      `${name} is provided in versions ${inGroup.map((e) => e.definition.version || "''").join(', ')}: name one with the ${TRI_VERSION_HEADER} header`,
    );
  };

  return {
    find(path, version, group) {
      const plain = version === undefined && group === '';
      if (plain) {
        index();
        const known = byPath.get(path);
        if (known !== undefined) return known;
      }
      const slash = path.lastIndexOf('/');
      if (path[0] !== '/' || slash <= 1 || slash === path.length - 1) {
        return new RpcError(
          'MethodNotFound',
          `malformed gRPC path ${JSON.stringify(path.slice(0, 200))}: expected /<package.Service>/<Method>`,
        );
      }
      const service = path.slice(1, slash);
      const name = path.slice(slash + 1);
      const exported = serviceOf(service, version, group);
      if (exported instanceof RpcError) return exported;
      const method = methodOf(exported, name) ?? methodOf(exported, name[0]!.toLowerCase() + name.slice(1));
      if (method === undefined) {
        return new RpcError('MethodNotFound', `${service} has no method ${name.slice(0, 200)}`);
      }
      const target = { exported, method };
      // only paths that name a method are kept: a client's made-up paths cannot grow the cache
      if (plain) byPath.set(path, target);
      return target;
    },
    names() {
      const names = new Set<string>();
      for (const list of index().values()) for (const exported of list) names.add(grpcNameOf(exported));
      return [...names].sort();
    },
    servicesNamed: (name) => index().get(name) ?? [],
  };
}
