/**
 * The gRPC status of an HTTP response that is not a gRPC one (a proxy's error page, a server that is
 * not gRPC), as gRPC's "HTTP to gRPC Status Code Mapping" has it: what a client reports when a
 * response carries an HTTP status other than 200 and no `grpc-status`.
 */
import { GrpcStatus, type GrpcStatusCode } from './status.js';

export function grpcStatusOfHttp(status: number): GrpcStatusCode {
  switch (status) {
    case 400:
      return GrpcStatus.INTERNAL;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 404:
      return GrpcStatus.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GrpcStatus.UNAVAILABLE;
    default:
      return GrpcStatus.UNKNOWN;
  }
}
