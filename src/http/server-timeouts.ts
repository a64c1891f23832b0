/**
 * The timeouts and header bounds of a node:http server, the same for every HTTP listener: the time a
 * connection has to send a request's headers, node's backstop for a whole request, the idle time of a
 * kept-alive connection, the header block's size (16 KiB, whatever node's command line says), and how
 * often node checks them — a quarter of the headers' timeout, at most every second (node's default,
 * 30 s, let an idle socket linger up to 40 s past a 10 s timeout).
 */
import type http from 'node:http';

export interface ServerTimeouts {
  /** Time a connection has to send a request's headers, ms; then 408 and closed. */
  readonly headersTimeoutMs: number;
  /** Time a whole request may take to arrive, ms (node's backstop; a body reader has its own). */
  readonly requestTimeoutMs: number;
  /** Idle time of a kept-alive connection before it is closed, ms. */
  readonly keepAliveTimeoutMs: number;
}

/** The largest header block of a request, bytes: 431 past it. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** node:http's server options for `timeouts`. */
export function serverTimeouts(timeouts: ServerTimeouts): http.ServerOptions {
  const { headersTimeoutMs } = timeouts;
  return {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: headersTimeoutMs,
    // node refuses a request timeout below the headers' one
    requestTimeout: Math.max(timeouts.requestTimeoutMs, headersTimeoutMs),
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
}
