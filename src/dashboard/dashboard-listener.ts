/**
 * The dashboard's HTTP or HTTPS listener, built with the HTTP toolkit as every listener of an app is
 * (src/http/): header, body and request timeouts, connections capped in all and per remote address,
 * and TLS from its own options — the key, certificate and optional client CA are PEM text or files
 * (read and checked at start, so a bad file fails there, naming the option), re-read when they change
 * (`reloadIntervalMs`): new connections use the new ones, open connections stay.
 */
import type http from 'node:http';
import type { Logger } from '../index.js';
import { createConnectionCaps, createHttpListener, type HttpListener, listenerTls } from '../internal.js';
import {
  DashboardOptionError,
  DEFAULT_DASHBOARD_OPTIONS,
  type ResolvedDashboardOptions,
} from './dashboard-options.js';

/** Request headers read (node drops the rest). */
const MAX_HEADERS_COUNT = 100;

export function createDashboardListener(
  options: ResolvedDashboardOptions,
  handle: (request: http.IncomingMessage, response: http.ServerResponse) => void,
  log: (message: string) => void,
): HttpListener {
  const logger: Logger = {
    debug() {},
    info: (message) => log(`dashboard: ${message}`),
    warn: (message) => log(`dashboard: ${message}`),
    error: (message) => log(`dashboard: ${message}`),
  };
  const tls = listenerTls(options.tls, {
    where: 'tls',
    error: (key, value, expected, problem) =>
      new DashboardOptionError(key, value, problem === undefined ? expected : `${expected} (${problem})`),
    reloadIntervalMs: options.tls?.reloadIntervalMs ?? DEFAULT_DASHBOARD_OPTIONS.tlsReloadIntervalMs,
    handshakeTimeoutMs: DEFAULT_DASHBOARD_OPTIONS.tlsHandshakeTimeoutMs,
  });
  return createHttpListener({
    options: {
      host: options.host,
      port: options.port,
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      keepAliveTimeoutMs: 5_000,
      maxHeadersCount: MAX_HEADERS_COUNT,
      tls,
    },
    where: 'dashboard',
    caps: createConnectionCaps(
      { maxConnections: options.maxConnections, maxConnectionsPerAddress: options.maxConnectionsPerAddress },
      'dashboard',
    ),
    // refused connections and malformed requests are answered, not logged (the log is the user's console)
    onRefused() {},
    logger,
    handle,
  });
}
