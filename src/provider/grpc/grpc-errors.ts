/**
 * A shaped error (provider/entry.ts) as the end of a gRPC call (docs/grpc.md, "Status codes"): the
 * status from the code's row of the table (protocol/grpc/status.ts), `grpc-message` the error's message,
 * `grpc-status-details-bin` a google.rpc.Status with both, and for Callisto peers the exact code
 * (`callisto-code`) and the error's `{name, message, details}` as JSON (`callisto-error-bin`), so that a
 * declared business error keeps its fields.
 */
import type { ErrorCodeName } from '../../core/rpc-error.js';
import { errorCodeName } from '../../core/rpc-error.js';
import { ProtoWriter } from '../../protocol/grpc/proto-wire.js';
import { CALLISTO_CODE_TRAILER, grpcStatusOf } from '../../protocol/grpc/status.js';
import type { ShapedError } from '../entry.js';
import type { GrpcEnd } from './grpc-exchange.js';

/** The trailer carrying the error's payload (JSON, base64 as binary metadata) between Callisto peers. */
export const CALLISTO_ERROR_TRAILER = 'callisto-error-bin';

/** google.rpc.Status { int32 code = 1; string message = 2; }, base64. */
export function statusDetails(status: number, message: string): string {
  return new ProtoWriter().uint(1, status).bytes(2, message).finish().toString('base64');
}

/** The end of a call that failed with `error`. */
export function grpcEndOf(error: ShapedError): GrpcEnd {
  const code = errorCodeName(error.status) as ErrorCodeName;
  return grpcEndFor(code, error.payload.message, JSON.stringify(error.payload));
}

/** The end of a call refused with Callisto `code` and `message` (before any invocation). */
export function grpcEndFor(code: ErrorCodeName, message: string, payloadJson?: string): GrpcEnd {
  const status = grpcStatusOf(code);
  return {
    status,
    message,
    trailers: {
      'grpc-status-details-bin': statusDetails(status, message),
      [CALLISTO_CODE_TRAILER]: code,
      ...(payloadJson === undefined
        ? {}
        : { [CALLISTO_ERROR_TRAILER]: Buffer.from(payloadJson, 'utf8').toString('base64') }),
    },
  };
}
