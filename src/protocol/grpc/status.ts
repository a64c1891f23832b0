/**
 * gRPC status codes and their mapping to Callisto's error codes, both ways (docs/grpc.md, "Status
 * codes"). The gRPC entry answers an `RpcError` with the status of `grpcStatusOf`; the gRPC consumer
 * turns a status it receives into the code of `rpcCodeOf`. Between two Callisto peers the exact code
 * also travels in the `callisto-code` trailer (`CALLISTO_CODE_TRAILER`), so nothing is lost in the
 * round trip (`Overloaded` and `Shutdown` both become `UNAVAILABLE` for everyone else, but a Callisto
 * consumer still knows the call never ran).
 */
import type { ErrorCodeName } from '../../core/rpc-error.js';

/** The gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type GrpcStatusName = keyof typeof GrpcStatus;
export type GrpcStatusCode = (typeof GrpcStatus)[GrpcStatusName];

/** The trailer that carries the exact Callisto code between Callisto peers. */
export const CALLISTO_CODE_TRAILER = 'callisto-code';

const statusNames = new Map<number, GrpcStatusName>(
  Object.entries(GrpcStatus).map(([name, code]) => [code, name as GrpcStatusName]),
);

/** The name of gRPC status `code` (`UNKNOWN` for a number outside the table). */
export function grpcStatusName(code: number): GrpcStatusName {
  return statusNames.get(code) ?? 'UNKNOWN';
}

/** Callisto code → gRPC status: what the gRPC entry answers. */
const TO_GRPC: Readonly<Record<ErrorCodeName, GrpcStatusCode>> = {
  Timeout: GrpcStatus.DEADLINE_EXCEEDED,
  Network: GrpcStatus.UNAVAILABLE,
  ServiceNotFound: GrpcStatus.UNIMPLEMENTED,
  MethodNotFound: GrpcStatus.UNIMPLEMENTED,
  BadRequest: GrpcStatus.INVALID_ARGUMENT,
  Serialization: GrpcStatus.INTERNAL,
  ProviderError: GrpcStatus.UNKNOWN,
  Overloaded: GrpcStatus.UNAVAILABLE,
  Unauthorized: GrpcStatus.UNAUTHENTICATED,
  RateLimited: GrpcStatus.RESOURCE_EXHAUSTED,
  Cancelled: GrpcStatus.CANCELLED,
  NoProvider: GrpcStatus.UNAVAILABLE,
  Shutdown: GrpcStatus.UNAVAILABLE,
  Internal: GrpcStatus.INTERNAL,
};

/** gRPC status → Callisto code: what a gRPC consumer makes of a status from any server. */
const FROM_GRPC: Readonly<Record<GrpcStatusName, ErrorCodeName>> = {
  OK: 'Internal', // never an error; listed so that the table is total
  CANCELLED: 'Cancelled',
  UNKNOWN: 'ProviderError',
  INVALID_ARGUMENT: 'BadRequest',
  DEADLINE_EXCEEDED: 'Timeout',
  NOT_FOUND: 'ProviderError',
  ALREADY_EXISTS: 'ProviderError',
  PERMISSION_DENIED: 'Unauthorized',
  RESOURCE_EXHAUSTED: 'RateLimited',
  FAILED_PRECONDITION: 'ProviderError',
  ABORTED: 'ProviderError',
  OUT_OF_RANGE: 'ProviderError',
  UNIMPLEMENTED: 'MethodNotFound',
  INTERNAL: 'Internal',
  UNAVAILABLE: 'Network',
  DATA_LOSS: 'Internal',
  UNAUTHENTICATED: 'Unauthorized',
};

/** The gRPC status the entry answers for an error of Callisto `code`. */
export function grpcStatusOf(code: ErrorCodeName): GrpcStatusCode {
  return TO_GRPC[code];
}

/**
 * The Callisto code for gRPC status `status`; `callistoCode` (the `callisto-code` trailer, from a
 * Callisto peer) wins when it names a code whose status is `status`, so a peer cannot claim, say,
 * `Overloaded` (never run, safe to retry) for a status that says otherwise.
 */
export function rpcCodeOf(status: number, callistoCode?: string): ErrorCodeName {
  if (callistoCode !== undefined && Object.hasOwn(TO_GRPC, callistoCode)) {
    const exact = callistoCode as ErrorCodeName;
    if (TO_GRPC[exact] === status) return exact;
  }
  return FROM_GRPC[grpcStatusName(status)];
}

/** Both tables, for docs/grpc.md and its staleness test. */
export const GRPC_STATUS_TABLES = { toGrpc: TO_GRPC, fromGrpc: FROM_GRPC } as const;
