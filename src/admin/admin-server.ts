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
import { timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createConnectionCaps } from '../http/connection-caps.js';
import { htmlPage } from './admin-html.js';
import type { AdminConfig } from './admin-options.js';
import { createListenerServer } from './admin-tls.js';

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

function tokenMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice('Bearer '.length));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** What the admin server reads of `admin.*` (the limits and TLS default to DEFAULT_ADMIN_CONFIG's). */
export type AdminServerOptions = Pick<AdminConfig, 'host' | 'port' | 'token'> &
  Partial<Pick<AdminConfig, 'maxConnections' | 'maxConnectionsPerAddress' | 'headersTimeoutMs' | 'tls'>>;

export function createAdminServer(options: AdminServerOptions, source: AdminSource): AdminServer {
  let port = 0;
  const sockets = new Set<Socket>();
  const headersTimeoutMs = options.headersTimeoutMs ?? 5_000;
  const caps = createConnectionCaps(
    {
      maxConnections: options.maxConnections ?? 64,
      maxConnectionsPerAddress: options.maxConnectionsPerAddress ?? 8,
    },
    'admin',
  );

  const send = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    status: number,
    title: string,
    body: unknown,
  ): void => {
    const html = /\btext\/html\b/.test(request.headers.accept ?? '');
    const text = html
      ? htmlPage(`${source.application} ${title}`, body, ADMIN_PATHS)
      : `${JSON.stringify(body, null, 2)}\n`;
    response.writeHead(status, {
      'content-type': html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
    response.end(request.method === 'HEAD' ? undefined : text);
  };

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    // nothing is read from a request body
    request.resume();
    if (options.token !== '' && !tokenMatches(request.headers.authorization, options.token)) {
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
        response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        response.end(request.method === 'HEAD' ? undefined : text);
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

  const serverOptions: http.ServerOptions = {
    maxHeaderSize: 16 * 1024,
    headersTimeout: headersTimeoutMs,
    requestTimeout: headersTimeoutMs + 5_000,
    keepAliveTimeout: 5_000,
    // node checks the header and request timeouts this often (30 s by default: idle sockets lingered)
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
  const server = createListenerServer(options.tls, 'admin.tls', serverOptions, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else
        send(request, response, 500, 'error', {
          error: 'Internal',
          message: (error as Error)?.message ?? String(error),
        });
    });
  });
  server.prependListener('connection', (socket: Socket) => {
    if (caps.admit(socket) !== undefined) {
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  return {
    get port() {
      return port;
    },
    host: options.host,
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (error: Error) => {
          reject(
            new Error(
              `admin endpoints: cannot listen on ${options.host}:${options.port} (${error.message}); set admin.port to a free port, or 0`,
            ),
          );
        };
        server.once('error', onError);
        server.listen(options.port, options.host, () => {
          server.off('error', onError);
          port = (server.address() as AddressInfo).port;
          resolve();
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
