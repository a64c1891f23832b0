/**
 * The node:http server under the provider's HTTP entry and the gateway: header and request timeouts,
 * keep-alive, what node refuses before a request exists answered as JSON (malformed, headers too large,
 * headers too slow), connections admitted or refused as they arrive (before a TLS handshake), answers in
 * flight tracked for a graceful close. HTTPS when the options carry TLS (http-server-tls.ts); plaintext
 * next to the app's TLS only when asked for (`plaintext`), with a warning naming the port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../observability/logger.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import { sendSocketError } from './http-answer.js';
import type { HttpOptions } from './http-options.js';
import { createHttpServer } from './http-server-tls.js';

export interface HttpListener {
  /** The port listened on (the real one when configured as 0), once listening. */
  readonly port: number;
  readonly host: string;
  /** `https` when serving TLS. */
  readonly scheme: 'http' | 'https';
  listen(): Promise<void>;
  /**
   * Shutting down: stops taking connections, closes idle ones now, and answers from now on close theirs
   * (a request on a busy connection is still served, as calls on a connection told "going away" are).
   */
  goAway(): void;
  /** Stops listening; waits for answers in flight (at most `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
  /** Closes every connection at once. */
  destroy(): void;
}

export interface HttpListenerParts {
  readonly options: HttpOptions;
  /** Where the limits' key names come from in messages (`server.http`, `createGateway`). */
  readonly where: string;
  /** A TCP connection arrived (before any TLS handshake): false closes it at once. */
  admit(socket: Socket): boolean;
  /** A request or connection was refused for what it carries or does (logged, rate-limited). */
  onRefused(remote: string, reason: string): void;
  handle(request: IncomingMessage, response: ServerResponse, connection: HttpConnection): void;
  /** The plaintext warning, certificate reloads and handshake failures (rate-limited) go here. */
  readonly logger?: Logger | undefined;
  /** Told once a reload loaded new certificates (tests wait for it). */
  readonly onReload?: (() => void) | undefined;
}

/** The connection a request came on. */
export interface HttpConnection {
  /** The TCP socket `admit` accepted (the request's socket is the TLS socket over it, with HTTPS). */
  readonly socket: Socket;
  /** The client certificate this connection presented in its own TLS handshake (mutual TLS). */
  readonly peerCertificate: PeerCertificate | undefined;
}

export const remoteOf = (socket: Socket): string => `${socket.remoteAddress}:${socket.remotePort}`;

export function createHttpListener(parts: HttpListenerParts): HttpListener {
  const { options, where } = parts;
  const inFlight = new Set<ServerResponse>();
  let goingAway = false;
  let port = options.port;
  let closing: Promise<void> | undefined;

  const served = createHttpServer({
    http: {
      headersTimeout: options.headersTimeoutMs,
      // the body has its own timer (http-body.ts); this is node's backstop for the whole request
      requestTimeout: options.headersTimeoutMs + options.bodyTimeoutMs + 1_000,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(options.headersTimeoutMs / 4))),
    },
    tls: options.tls,
    admit: parts.admit,
    logger: parts.logger,
    where: () => `${where} (${options.host}:${port})`,
    onReload: parts.onReload,
  });
  const server = served.server;

  // What node:http refuses before a request exists: answered as JSON too, then closed.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code;
    // a failed TLS handshake (node:https tells it here too) is the TLS guard's to log: no HTTP answer
    if (code === 'ECONNRESET' || code === 'EPIPE' || (code !== undefined && /^ERR_(SSL|TLS)_/.test(code))) {
      socket.destroy();
      return;
    }
    parts.onRefused(remoteOf(socket), `HTTP request refused: ${code ?? error.message}`);
    if (code === 'HPE_HEADER_OVERFLOW') {
      sendSocketError(socket, 431, 'BadRequest', 'the request headers are too large');
    } else if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      sendSocketError(
        socket,
        408,
        'Timeout',
        `the request headers did not arrive within ${options.headersTimeoutMs} ms (${where}.headersTimeoutMs)`,
      );
    } else {
      sendSocketError(socket, 400, 'BadRequest', `malformed HTTP request (${code ?? 'parse error'})`);
    }
  });

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
    if (goingAway) response.shouldKeepAlive = false;
    const socket = served.acceptedOf(request.socket);
    if (socket === undefined) {
      response.destroy();
      return;
    }
    parts.handle(request, response, { socket, peerCertificate: served.peerOf(request.socket) });
  });

  let stopped: Promise<void> | undefined;
  /** Stops taking connections (once); resolves when every connection is gone. */
  const stopListening = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) =>
      server.close(() => {
        served.close();
        resolve();
      }),
    );
    return stopped;
  };

  return {
    get port() {
      return port;
    },
    host: options.host,
    scheme: served.scheme,
    listen() {
      return new Promise<void>((resolve, reject) => {
        const onError = (error: Error): void => reject(error);
        server.once('error', onError);
        server.listen(options.port, options.host, () => {
          server.off('error', onError);
          const address = server.address();
          if (address !== null && typeof address === 'object') port = address.port;
          if (options.plaintext) {
            parts.logger?.warn(
              `${where}: serving plaintext HTTP on ${options.host}:${port} although server.tls is set: requests and their credentials travel unencrypted (${where}.plaintext: true; remove it to serve HTTPS with server.tls)`,
            );
          }
          resolve();
        });
      });
    },
    goAway() {
      goingAway = true;
      for (const response of inFlight) if (!response.headersSent) response.shouldKeepAlive = false;
      stopListening();
      server.closeIdleConnections();
    },
    close(graceMs = 1_000) {
      closing ??= (async () => {
        goingAway = true;
        const stopped = stopListening();
        server.closeIdleConnections();
        if (inFlight.size > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, graceMs);
            timer.unref();
            const check = (): void => {
              if (inFlight.size === 0) {
                clearTimeout(timer);
                resolve();
              }
            };
            for (const response of inFlight) response.once('close', check);
          });
        }
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
    destroy() {
      goingAway = true;
      closing ??= stopListening();
      server.closeAllConnections();
    },
  };
}
