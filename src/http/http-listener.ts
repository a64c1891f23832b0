/**
 * The HTTP server of every HTTP listener (the provider's entry, the gateway, the admin port, the
 * dashboard): header and request timeouts and keep-alive (server-timeouts.ts), what node refuses before
 * a request exists answered as JSON (malformed, headers too large, headers too slow), connections
 * admitted or refused as they arrive (before a TLS handshake: connection-caps.ts, or the listener's own
 * `admit`), answers in flight tracked for a graceful close. HTTPS when the options carry TLS
 * (http-server-tls.ts); plaintext next to the app's TLS only when asked for (`plaintext`), with a
 * warning naming the port.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../observability/logger.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import type { ServerTlsOptions } from '../transport/tls-options.js';
import type { ConnectionCaps } from './connection-caps.js';
import { sendSocketError } from './http-answer.js';
import { createHttpServer } from './http-server-tls.js';
import { serverTimeouts } from './server-timeouts.js';

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

/** What a listener is built with (the entry's and the gateway's HttpOptions are such). */
export interface HttpListenerOptions {
  /** Port; 0 picks a free one. */
  readonly port: number;
  readonly host: string;
  /** Time a connection has to send a request's headers, ms; then 408 and closed. */
  readonly headersTimeoutMs: number;
  /** Idle time of a kept-alive connection, ms. */
  readonly keepAliveTimeoutMs: number;
  /** The body's own timeout, ms (http-body.ts), when the listener reads bodies. Default 0. */
  readonly bodyTimeoutMs?: number | undefined;
  /** node's backstop for a whole request, ms. Default the headers' and the body's timeouts and 1 s. */
  readonly requestTimeoutMs?: number | undefined;
  /** Headers read of a request (node drops the rest). Default node's (2000). */
  readonly maxHeadersCount?: number | undefined;
  /** Serve plaintext although TLS is configured for the app (`plaintext: true`): warned about at start. */
  readonly plaintext?: boolean | undefined;
  /** Serve HTTPS with these; undefined serves plaintext HTTP. */
  readonly tls?: ServerTlsOptions | undefined;
}

export interface HttpListenerParts {
  readonly options: HttpListenerOptions;
  /** Where the limits' key names come from in messages (`server.http`, `createGateway`, `admin`). */
  readonly where: string;
  /** Connections in all and per address: one over is closed as it arrives (told to `onRefused`). */
  readonly caps?: ConnectionCaps | undefined;
  /** A TCP connection arrived (before any TLS handshake; within `caps`): false closes it at once. */
  readonly admit?: ((socket: Socket) => boolean) | undefined;
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

  const { caps, admit } = parts;
  const served = createHttpServer({
    http: serverTimeouts({
      headersTimeoutMs: options.headersTimeoutMs,
      // a body has its own timer (http-body.ts); this is node's backstop for the whole request
      requestTimeoutMs:
        options.requestTimeoutMs ?? options.headersTimeoutMs + (options.bodyTimeoutMs ?? 0) + 1_000,
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
    }),
    tls: options.tls,
    admit(socket) {
      const refusal = caps?.admit(socket);
      if (refusal !== undefined) {
        parts.onRefused(remoteOf(socket), `connection refused: ${refusal}`);
        return false;
      }
      return admit === undefined || admit(socket);
    },
    logger: parts.logger,
    where: () => `${where} (${options.host}:${port})`,
    onReload: parts.onReload,
  });
  const server = served.server;
  if (options.maxHeadersCount !== undefined) server.maxHeadersCount = options.maxHeadersCount;

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
