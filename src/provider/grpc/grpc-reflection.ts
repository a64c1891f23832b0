/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha): placeholder until descriptors are built.
 */
import type { GrpcBuiltin } from './grpc-call.js';
import type { GrpcRoutes } from './grpc-routes.js';

export interface GrpcReflection {
  readonly methods: ReadonlyMap<string, GrpcBuiltin>;
}

export function createGrpcReflection(_routes: GrpcRoutes): GrpcReflection {
  return { methods: new Map() };
}
