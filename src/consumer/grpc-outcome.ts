/**
 * What a gRPC response says (grpc-call.ts reads it): a response that is not gRPC's at its headers, the
 * RpcError of a `grpc-status` other than 0 (`rpcCodeOf`, protocol/grpc/status.ts, the `callisto-code`
 * trailer counting only when it agrees; the decoded `grpc-message`; `details.grpcStatus`, and the
 * `grpc-status-details-bin` trailer's base64 as `details.grpcStatusDetailsBin`), the error of
 * a stream that ended without a status (a reset or a lost connection), and the response's metadata.
 */
import http2, { type IncomingHttpHeaders } from 'node:http2';
import type { Attachments } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { grpcStatusOfHttp } from '../protocol/grpc/http-status.js';
import { attachmentsFromHeaders } from '../protocol/grpc/metadata.js';
import { CALLISTO_CODE_TRAILER, GrpcStatus, grpcStatusName, rpcCodeOf } from '../protocol/grpc/status.js';
import { decodeStatusMessage } from '../protocol/grpc/status-message.js';

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_ENHANCE_YOUR_CALM } = http2.constants;

/** Whose response, for messages. */
export interface ResponseSite {
  /** `Service.method`. */
  readonly label: string;
  /** `grpc://host:port`. */
  readonly address: string;
}

/**
 * The error of a response that is not gRPC's (an HTTP status other than 200: a proxy's error page, a
 * server that is not gRPC; another content type), or undefined. Not remote: who answered is unknown.
 */
export function notGrpcResponse(headers: IncomingHttpHeaders, site: ResponseSite): RpcError | undefined {
  const httpStatus = Number(headers[':status'] ?? 0);
  if (httpStatus !== 200) {
    const grpc = grpcStatusOfHttp(httpStatus);
    // a status nobody can read as the server's verdict is no business error
    const code = grpc === GrpcStatus.UNKNOWN ? 'Internal' : rpcCodeOf(grpc);
    return new RpcError(
      code,
      `${site.label}: ${site.address} answered HTTP ${httpStatus} without a gRPC status`,
      {
        details: { httpStatus, grpcStatus: grpc, grpcStatusName: grpcStatusName(grpc) },
      },
    );
  }
  const type = String(headers['content-type'] ?? '');
  if (!/^application\/grpc([+;]|$)/.test(type)) {
    return new RpcError(
      'Internal',
      `${site.label}: ${site.address} answered ${JSON.stringify(type.slice(0, 60))}, not a gRPC response`,
      { details: { httpStatus } },
    );
  }
  return undefined;
}

/** The gRPC status of `trailers` as a number (a malformed one is UNKNOWN), or undefined when there is none. */
export function statusOf(trailers: IncomingHttpHeaders | undefined): number | undefined {
  const status = single(trailers?.['grpc-status']);
  if (status === undefined) return undefined;
  return /^\d{1,3}$/.test(status) ? Number(status) : GrpcStatus.UNKNOWN;
}

/** The RpcError of status `code` (not 0) with its trailers. */
export function statusError(code: number, trailers: IncomingHttpHeaders, site: ResponseSite): RpcError {
  const name = grpcStatusName(code);
  const text = decodeStatusMessage(single(trailers['grpc-message']));
  const callistoCode = single(trailers[CALLISTO_CODE_TRAILER]);
  // the rich status (google.rpc.Status, protobuf), as sent: base64 text
  const rich = single(trailers['grpc-status-details-bin']);
  return new RpcError(
    rpcCodeOf(code, callistoCode),
    text || `${site.label}: ${site.address} answered ${name}`,
    {
      remote: true,
      details: {
        grpcStatus: code,
        grpcStatusName: name,
        ...(rich === undefined ? {} : { grpcStatusDetailsBin: rich }),
      },
    },
  );
}

/**
 * Why a stream ended without a status: the server's reset (REFUSED_STREAM: never processed; CANCEL;
 * ENHANCE_YOUR_CALM), else `lost` (the stream's error, or the connection's), else a Network error
 * made by `network` (which knows whether the stream was provably never sent).
 */
export function resetError(
  rstCode: number,
  lost: RpcError | undefined,
  site: ResponseSite,
  network: (message: string) => RpcError,
): RpcError {
  const { label, address } = site;
  if (rstCode === NGHTTP2_REFUSED_STREAM) {
    return new RpcError('Network', `${address} refused the stream of ${label} (REFUSED_STREAM)`, {
      neverSent: true,
    });
  }
  if (rstCode === NGHTTP2_CANCEL) {
    return new RpcError('Cancelled', `${address} cancelled the stream of ${label}`, { remote: true });
  }
  if (rstCode === NGHTTP2_ENHANCE_YOUR_CALM) {
    return new RpcError('RateLimited', `${address} reset the stream of ${label} (ENHANCE_YOUR_CALM)`);
  }
  if (lost !== undefined) return lost;
  return network(
    rstCode === 0
      ? `${address} closed the stream of ${label} without a gRPC status`
      : `${address} reset the stream of ${label} (HTTP/2 error ${rstCode})`,
  );
}

/** The call's metadata of a response: its headers' and its trailers' (`callisto-code` left out). */
export function metadataOf(
  headers: IncomingHttpHeaders | undefined,
  trailers: IncomingHttpHeaders | undefined,
): Attachments {
  const attachments =
    headers === undefined ? (Object.create(null) as Attachments) : attachmentsFromHeaders(headers);
  if (trailers !== undefined) Object.assign(attachments, attachmentsFromHeaders(trailers));
  delete attachments[CALLISTO_CODE_TRAILER];
  return attachments;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
