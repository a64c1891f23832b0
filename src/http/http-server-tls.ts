/**
 * One node:http or node:https server for every HTTP listener (http-listener.ts: the provider's HTTP
 * entry, the admin endpoints, the gateway and the dashboard): "TLS means TLS on every port". Given the
 * app's resolved `server.tls` (or a listener's own, listener-tls.ts) it serves HTTPS with those
 * certificates — reloaded when their files change, as the `tls` transport's are —, asks for client
 * certificates when the options do, and reads them from each connection's own TLS socket; connections
 * are admitted as they arrive, before their handshake, and a handshake that fails or does not finish
 * within `handshakeTimeoutMs` closes its connection (logged, rate-limited). Without TLS it is a plain
 * node:http server.
 *
 * ```ts
 * const served = createHttpServer({ http: { headersTimeout: 10_000 }, tls, admit, logger, where: () => 'admin' });
 * served.server.on('request', (request, response) => {
 *   const peer = served.peerOf(request.socket); // the client certificate of this connection, if any
 * });
 * served.server.listen(port, host);
 * // once closed:
 * served.close();
 * ```
 */
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type tls from 'node:tls';
import type { Logger } from '../observability/logger.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import type { ServerTlsOptions } from '../transport/tls-options.js';
import { createServerTlsContext, guardTlsServer, peerOf, tlsServerOptions } from '../transport/tls-server.js';

export interface HttpServerParts {
  /** node:http's options (header and request timeouts, keep-alive, header size). */
  readonly http: http.ServerOptions;
  /** The app's `server.tls`, resolved: serve HTTPS with it; undefined serves plaintext HTTP. */
  readonly tls: ServerTlsOptions | undefined;
  /** A TCP connection arrived (before any TLS handshake): false closes it at once. Default: all are. */
  readonly admit?: ((socket: Socket) => boolean) | undefined;
  /** Certificate reloads and (rate-limited) handshake failures are logged here. */
  readonly logger?: Logger | undefined;
  /** What log lines call this server (`server.http on 127.0.0.1:8443`), once listening. */
  readonly where: () => string;
  /** Told once a reload loaded new certificates (tests wait for it). */
  readonly onReload?: (() => void) | undefined;
}

export interface HttpServer {
  /** The node server (an https.Server with TLS): add 'request' listeners, `listen`, `close`. */
  readonly server: http.Server;
  readonly scheme: 'http' | 'https';
  /**
   * The client certificate the connection of `socket` (a request's socket) presented in its own TLS
   * handshake; undefined over plaintext, without one, or when `server.tls` does not ask for one.
   */
  peerOf(socket: Socket): PeerCertificate | undefined;
  /** The TCP socket `admit` was asked about for the connection of `socket` (a request's socket). */
  acceptedOf(socket: Socket): Socket | undefined;
  /** Reloads the certificate files now if they changed; true when a new context was loaded. */
  reloadNow(): boolean;
  /** Stops watching the certificate files (once the server is closed). Idempotent. */
  close(): void;
}

export function createHttpServer(parts: HttpServerParts): HttpServer {
  const admit = parts.admit ?? (() => true);
  if (parts.tls === undefined) {
    const server = http.createServer(parts.http);
    server.on('connection', (socket: Socket) => {
      if (!admit(socket)) {
        socket.on('error', () => {});
        socket.destroy();
      }
    });
    return {
      server,
      scheme: 'http',
      peerOf: () => undefined,
      acceptedOf: (socket) => socket,
      reloadNow: () => false,
      close() {},
    };
  }
  const options = parts.tls;
  const context = createServerTlsContext(options, {
    logger: parts.logger,
    onReload: parts.onReload,
    label: parts.where,
  });
  const server = https.createServer({ ...parts.http, ...tlsServerOptions(options, context) });
  const accepted = new WeakMap<Socket, Socket>();
  const peers = new WeakMap<Socket, PeerCertificate>();
  const guard = guardTlsServer(server, {
    admit: (socket) => (admit(socket) ? { socket, disconnect() {} } : undefined),
    logger: parts.logger,
    where: parts.where,
  });
  // before node:https starts reading requests from it
  server.prependListener('secureConnection', (socket: tls.TLSSocket) => {
    const admitted = guard.take(socket);
    if (admitted === undefined) {
      socket.destroy();
      return;
    }
    accepted.set(socket, admitted.socket);
    if (options.requestCert) {
      const peer = peerOf(socket);
      if (peer !== undefined) peers.set(socket, peer);
    }
  });
  const untrack = context.track(server);
  return {
    server,
    scheme: 'https',
    peerOf: (socket) => peers.get(socket),
    acceptedOf: (socket) => accepted.get(socket),
    reloadNow: context.reloadNow,
    close: untrack,
  };
}
