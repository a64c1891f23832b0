/**
 * The admin endpoints on a port of their own (opt-in: `admin.enabled`; loopback by default):
 *
 *   GET /health    liveness: 200 while the process serves this port
 *   GET /ready     readiness: 200 once started and registered, 503 while starting and from the first
 *                  step of a graceful shutdown (before unregistering)
 *   GET /metrics   Prometheus text
 *   GET /services  provided and referred services, methods with their declarations, providers as the
 *                  consumer sees them (state, weight, in flight, latency)
 *   GET /config    the effective configuration with where each value came from
 *   GET /stats     per-method counters (the dashboard's feed)
 *
 * JSON unless the request accepts `text/html` (then a minimal page). With a token, every request needs
 * `Authorization: Bearer <token>` (401 otherwise). Only GET (and HEAD); the bodies are bounded by what
 * the app holds, never by what a request sends (a request body is not read). docs/observability.md.
 *
 * No client can lock `/health` out: connections are capped in all (`admin.maxConnections`) and per
 * remote address (`admin.maxConnectionsPerAddress`), and one that sends no request headers within
 * `admin.headersTimeoutMs` is closed (checked every quarter of it, at most every second). With
 * `admin.tls` the port serves HTTPS only.
 */
import type http from 'node:http';
import { sendAnswer, sendJson } from '../http/answer.js';
import { createBearerCheck } from '../http/bearer-token.js';
import { createConnectionCaps } from '../http/connection-caps.js';
import { createHttpListener } from '../http/http-listener.js';
import { listenerTls } from '../http/listener-tls.js';
import type { Logger } from '../observability/logger.js';
import { htmlPage, PAGE_HEADERS } from './admin-html.js';
import type { AdminConfig } from './admin-options.js';

/** What the admin endpoints read: the app implements it. */
export interface AdminSource {
  readonly application: string;
  health(): { status: 'ok'; state: string; uptimeMs: number };
  readiness(): { ready: boolean; state: string; reason?: string };
  metrics(): Promise<{ contentType: string; text: string }>;
  services(): unknown | Promise<unknown>;
  config(): unknown;
  stats(): unknown;
}

export interface AdminServer {
  /** The port listened on, once listening. */
  readonly port: number;
  readonly host: string;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export const ADMIN_PATHS = ['/health', '/ready', '/metrics', '/services', '/config', '/stats'] as const;

/** What the admin server reads of `admin.*` (the limits and TLS default to DEFAULT_ADMIN_CONFIG's). */
export type AdminServerOptions = Pick<AdminConfig, 'host' | 'port' | 'token'> &
  Partial<Pick<AdminConfig, 'maxConnections' | 'maxConnectionsPerAddress' | 'headersTimeoutMs' | 'tls'>>;

export interface AdminServerParts {
  /** Certificate reloads and failed handshakes (rate-limited), refused connections (debug). */
  readonly logger?: Logger | undefined;
}

export function createAdminServer(
  options: AdminServerOptions,
  source: AdminSource,
  parts: AdminServerParts = {},
): AdminServer {
  const headersTimeoutMs = options.headersTimeoutMs ?? 5_000;
  const authorized = createBearerCheck(options.token === '' ? undefined : options.token);

  const send = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    status: number,
    title: string,
    body: unknown,
  ): void => {
    if (!/\btext\/html\b/.test(request.headers.accept ?? '')) {
      sendJson(response, status, body, { pretty: true, request });
      return;
    }
    sendAnswer(response, {
      status,
      contentType: 'text/html; charset=utf-8',
      body: htmlPage(`${source.application} ${title}`, body, ADMIN_PATHS),
      headers: PAGE_HEADERS,
      request,
    });
  };

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    // nothing is read from a request body
    request.resume();
    if (!authorized(request)) {
      response.setHeader('www-authenticate', 'Bearer');
      send(request, response, 401, 'unauthorized', {
        error: 'Unauthorized',
        message: 'a Bearer token is required',
      });
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      send(request, response, 405, 'method not allowed', { error: 'MethodNotAllowed', message: 'only GET' });
      return;
    }
    const path = (request.url ?? '/').split('?')[0];
    switch (path) {
      case '/':
        send(request, response, 200, 'admin', { application: source.application, endpoints: ADMIN_PATHS });
        return;
      case '/health':
        send(request, response, 200, 'health', source.health());
        return;
      case '/ready': {
        const readiness = source.readiness();
        send(request, response, readiness.ready ? 200 : 503, 'readiness', readiness);
        return;
      }
      case '/metrics': {
        const { contentType, text } = await source.metrics();
        sendAnswer(response, { status: 200, contentType, body: text, request });
        return;
      }
      case '/services':
        send(request, response, 200, 'services', await source.services());
        return;
      case '/config':
        send(request, response, 200, 'configuration', source.config());
        return;
      case '/stats':
        send(request, response, 200, 'stats', source.stats());
        return;
      default:
        send(request, response, 404, 'not found', {
          error: 'NotFound',
          message: `no admin endpoint ${path}`,
          endpoints: ADMIN_PATHS,
        });
    }
  };

  const listener = createHttpListener({
    options: {
      host: options.host,
      port: options.port,
      headersTimeoutMs,
      // no body is read: the headers' time and 5 s
      requestTimeoutMs: headersTimeoutMs + 5_000,
      keepAliveTimeoutMs: 5_000,
      // checked now: a missing file, half a pair, a key that is not the certificate's fail the start
      tls: listenerTls(options.tls, { where: 'admin.tls', handshakeTimeoutMs: headersTimeoutMs }),
    },
    where: 'admin',
    caps: createConnectionCaps(
      {
        maxConnections: options.maxConnections ?? 64,
        maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? 8,
      },
      'admin',
    ),
    onRefused: (remote, reason) => parts.logger?.debug(`admin refused ${remote}: ${reason}`),
    logger: parts.logger,
    handle(request, response) {
      handle(request, response).catch((error: unknown) => {
        if (response.headersSent) response.destroy();
        else
          send(request, response, 500, 'error', {
            error: 'Internal',
            message: (error as Error)?.message ?? String(error),
          });
      });
    },
  });

  return {
    get port() {
      return listener.port;
    },
    host: options.host,
    async listen() {
      try {
        await listener.listen();
      } catch (error) {
        throw new Error(
          `admin endpoints: cannot listen on ${options.host}:${options.port} (${(error as Error).message}); set admin.port to a free port, or 0`,
        );
      }
    },
    close: () => listener.close(0),
  };
}
