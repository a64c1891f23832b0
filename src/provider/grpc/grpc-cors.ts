/**
 * Cross-origin calls to the gRPC entry from web pages (gRPC-Web and Connect from a browser; the Fetch
 * standard's CORS protocol): off unless `server.grpc.corsOrigins` names the origins whose pages may call.
 * A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method: POST`) from a listed origin
 * is answered 204 with what it may send; one from any other origin 403, so the browser sends nothing. A
 * call from a listed origin gets `Access-Control-Allow-Origin` with its answer (and every response
 * header exposed, so the page reads `grpc-status` of a trailers-only answer); a call from another
 * origin is served as any call (a non-browser client may send `Origin` too) without them, and the
 * browser keeps its answer from the page. No credentials mode: the page sends `authorization`
 * explicitly, never cookies.
 */
import type http2 from 'node:http2';

/** Headers a page may send when its preflight asks for ones that are not plain header names. */
const DEFAULT_ALLOWED_HEADERS =
  'content-type, x-grpc-web, x-user-agent, grpc-timeout, grpc-encoding, grpc-accept-encoding, authorization, connect-protocol-version, connect-timeout-ms, connect-content-encoding, connect-accept-encoding, tri-service-version, tri-service-group, traceparent, tracestate';

/** A preflight's requested headers, echoed when they are a short list of plain names. */
const REQUESTED_HEADERS = /^[a-z0-9_.-]+(\s*,\s*[a-z0-9_.-]+)*$/;

/** How long a browser may keep a preflight's answer, s. */
const PREFLIGHT_MAX_AGE_S = '600';

export interface GrpcCors {
  /** The headers to add to a call's answer from `origin`, or undefined when it gets none. */
  headersFor(origin: string | undefined): http2.OutgoingHttpHeaders | undefined;
  /** Answers a preflight on `stream`. */
  preflight(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void;
}

/** CORS for `origins` (exact origins, or `*`), or undefined when none is listed. */
export function createGrpcCors(origins: readonly string[]): GrpcCors | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const listed = new Set(origins);
  const allowed = (origin: string | undefined): origin is string =>
    origin !== undefined && (any || listed.has(origin));
  /** Made once per origin seen (at most the listed ones, or a bounded number with `*`). */
  const byOrigin = new Map<string, http2.OutgoingHttpHeaders>();
  return {
    headersFor(origin) {
      if (!allowed(origin)) return undefined;
      let headers = byOrigin.get(origin);
      if (headers === undefined) {
        headers = Object.freeze({
          'access-control-allow-origin': origin,
          'access-control-expose-headers': '*',
          vary: 'origin',
        });
        if (byOrigin.size < 256) byOrigin.set(origin, headers);
      }
      return headers;
    },
    preflight(stream, headers) {
      const origin = headers.origin;
      if (!allowed(origin) || headers['access-control-request-method'] !== 'POST') {
        stream.respond({ ':status': 403, vary: 'origin' }, { endStream: true });
        return;
      }
      const requested = String(headers['access-control-request-headers'] ?? '').toLowerCase();
      stream.respond(
        {
          ':status': 204,
          'access-control-allow-origin': origin,
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers':
            requested.length > 0 && requested.length <= 2048 && REQUESTED_HEADERS.test(requested)
              ? requested
              : DEFAULT_ALLOWED_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_S,
          vary: 'origin',
        },
        { endStream: true },
      );
    },
  };
}
