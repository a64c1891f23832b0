/**
 * The HTTP status of each RpcError code, for answers of the HTTP/JSON entry and the gateway (the table
 * in docs/http.md). The error's code travels in the JSON body too, so a client need not rely on the
 * status alone.
 */
import type { ErrorCodeName } from '../core/rpc-error.js';

export const HTTP_STATUS: Readonly<Record<ErrorCodeName, number>> = {
  BadRequest: 400,
  Serialization: 400,
  Unauthorized: 401,
  ServiceNotFound: 404,
  MethodNotFound: 404,
  Timeout: 504,
  RateLimited: 429,
  Overloaded: 503,
  Shutdown: 503,
  NoProvider: 503,
  Network: 502,
  /** nginx's "client closed request": the caller went away; nobody reads it. */
  Cancelled: 499,
  ProviderError: 500,
  Internal: 500,
};
