/**
 * The node:http server under the provider's HTTP entry and the gateway: header and request timeouts,
 * keep-alive, what node refuses before a request exists answered as JSON (malformed, headers too large,
 * headers too slow), connections admitted or refused as they arrive, answers in flight tracked for a
 * graceful close.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sendSocketError } from './http-answer.js';
import type { HttpOptions } from './http-options.js';

export interface HttpListener {
  /** The port listened on (the real one when configured as 0), once listening. */
  readonly port: number;
  readonly host: string;
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
  /** A connection arrived: false closes it at once. */
  admit(socket: Socket): boolean;
  /** A request or connection was refused for what it carries or does (logged, rate-limited). */
  onRefused(remote: string, reason: string): void;
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** Makes the server (an HTTPS one, for the gateway's own TLS); default `http.createServer`. */
  readonly createServer?: (options: http.ServerOptions) => http.Server;
}

export const remoteOf = (socket: Socket): string => `${socket.remoteAddress}:${socket.remotePort}`;

export function createHttpListener(parts: HttpListenerParts): HttpListener {
  const { options, where } = parts;
  const inFlight = new Set<ServerResponse>();
  let goingAway = false;
  let port = options.port;
  let closing: Promise<void> | undefined;

  const server = (parts.createServer ?? http.createServer)({
    headersTimeout: options.headersTimeoutMs,
    // the body has its own timer (http-body.ts); this is node's backstop for the whole request
    requestTimeout: options.headersTimeoutMs + options.bodyTimeoutMs + 1_000,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(options.headersTimeoutMs / 4))),
  });

  server.on('connection', (socket: Socket) => {
    if (!parts.admit(socket)) {
      socket.on('error', () => {});
      socket.destroy();
    }
  });

  // What node:http refuses before a request exists: answered as JSON too, then closed.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code;
    if (code === 'ECONNRESET' || code === 'EPIPE') {
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
    parts.handle(request, response);
  });

  let stopped: Promise<void> | undefined;
  /** Stops taking connections (once); resolves when every connection is gone. */
  const stopListening = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve) => server.close(() => resolve()));
    return stopped;
  };

  return {
    get port() {
      return port;
    },
    host: options.host,
    listen() {
      return new Promise<void>((resolve, reject) => {
        const onError = (error: Error): void => reject(error);
        server.once('error', onError);
        server.listen(options.port, options.host, () => {
          server.off('error', onError);
          const address = server.address();
          if (address !== null && typeof address === 'object') port = address.port;
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
