/**
 * What every TLS server of an app does alike — the `tls` transport's listener and every HTTPS server
 * (the HTTP entry, and the admin endpoints, gateway and dashboard through http/http-server-tls.ts):
 *
 * - one secure context from `server.tls`, whose files are polled every `reloadIntervalMs` and, when
 *   one changed, loaded into every server using it (`setSecureContext`): new handshakes use it, open
 *   connections are not touched; a reload that fails (a half-written file, a key that does not match)
 *   keeps the old context and is logged ({@link createServerTlsContext});
 * - connections admitted as they arrive, before their handshake, so that a peer holding handshakes
 *   open counts against the connection caps; a handshake that does not finish within
 *   `handshakeTimeoutMs` closes its connection; a failed handshake closes it and is logged, rate-limited
 *   ({@link guardTlsServer});
 * - the client certificate read from the TLS socket that presented it ({@link peerOf}): an identity
 *   travels with its connection, never by address.
 */
import fs from 'node:fs';
import type net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../observability/logger.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import {
  type PemContext,
  type PemSource,
  type ServerTlsOptions,
  serverContextOptions,
} from './tls-options.js';

/** Change detection over the file sources of a set of PEM values (mtime, size and inode). */
export function fileStamp(sources: readonly (PemSource | undefined)[]): () => string {
  const files = sources.flatMap((source) => (source && 'file' in source ? [source.file] : []));
  return () =>
    files
      .map((file) => {
        try {
          const stat = fs.statSync(file);
          return `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
        } catch {
          return 'missing';
        }
      })
      .join('|');
}

/** The server side's secure context, shared by the servers using it and reloaded when its files change. */
export interface ServerTlsContext {
  /** The context options in use now (read from the files at the first call, then at each reload). */
  contextOptions(): PemContext;
  /**
   * `server` uses this context from now on, and gets every reload; the files are polled while at least
   * one server is tracked. Returns the function that stops tracking it (idempotent).
   */
  track(server: tls.Server): () => void;
  /** Reloads now if the files changed; true when a new context was loaded. */
  reloadNow(): boolean;
}

export interface ServerTlsContextParts {
  readonly logger?: Logger | undefined;
  /** Told once a reload loaded new certificates (tests wait for it). */
  readonly onReload?: (() => void) | undefined;
  /** What the log lines call the servers using it (`server`, `server.http (127.0.0.1:8443)`). */
  readonly label?: (() => string) | undefined;
}

export function createServerTlsContext(
  options: ServerTlsOptions,
  parts: ServerTlsContextParts = {},
): ServerTlsContext {
  const { logger } = parts;
  const stamp = fileStamp([options.key, options.cert, options.ca]);
  let seen = stamp();
  let current: PemContext | undefined;
  const servers = new Set<tls.Server>();
  let timer: NodeJS.Timeout | undefined;

  const reloadNow = (): boolean => {
    const now = stamp();
    if (now === seen) return false;
    seen = now;
    let next: PemContext;
    try {
      next = serverContextOptions(options);
      tls.createSecureContext(next);
    } catch (error) {
      logger?.error(`TLS certificates not reloaded (keeping the ones in use): ${(error as Error).message}`);
      return false;
    }
    current = next;
    for (const server of servers) server.setSecureContext(next);
    logger?.info(
      `TLS certificates reloaded (${parts.label?.() ?? 'server'}): new connections use them, open ones are kept`,
    );
    parts.onReload?.();
    return true;
  };

  return {
    contextOptions() {
      current ??= serverContextOptions(options);
      return current;
    },
    track(server) {
      servers.add(server);
      if (timer === undefined && options.reloadIntervalMs > 0) {
        timer = setInterval(reloadNow, options.reloadIntervalMs);
        timer.unref();
      }
      return () => {
        servers.delete(server);
        if (servers.size === 0 && timer !== undefined) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    reloadNow,
  };
}

/** The options of `tls.createServer` / `https.createServer` for `options` with `context`. */
export function tlsServerOptions(options: ServerTlsOptions, context: ServerTlsContext): tls.TlsOptions {
  return {
    ...context.contextOptions(),
    requestCert: options.requestCert,
    rejectUnauthorized: options.requestCert && options.rejectUnauthorized,
    handshakeTimeout: options.handshakeTimeoutMs,
  };
}

/** A socket's verified-or-not client certificate, read from the socket that presented it. */
export function peerOf(socket: tls.TLSSocket): PeerCertificate | undefined {
  const cert = socket.getPeerCertificate();
  if (cert === null || typeof cert !== 'object' || Object.keys(cert).length === 0) return undefined;
  const cn = cert.subject?.CN;
  return {
    authorized: socket.authorized,
    authorizationError:
      socket.authorizationError === null || socket.authorizationError === undefined
        ? undefined
        : String(socket.authorizationError),
    commonName: Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? ''),
    altNames: cert.subjectaltname ? cert.subjectaltname.split(', ').map((name) => name.trim()) : [],
    fingerprint256: cert.fingerprint256,
  };
}

/** What {@link guardTlsServer} needs: how connections are admitted, and where failures are told. */
export interface TlsGuardParts<A extends { disconnect(): void }> {
  /**
   * A TCP connection arrived, before its handshake: what it holds (given back with `disconnect()` when
   * it closes), or undefined to close it at once.
   */
  admit(socket: net.Socket): A | undefined;
  /** Handshake failures go here, at most one line per 10 s (with the count of those not logged). */
  readonly logger?: Logger | undefined;
  /** What the log lines call this server (`tls://127.0.0.1:7000`, `server.http`), once listening. */
  readonly where: () => string;
}

export interface TlsGuard<A> {
  /** What `admit` answered for the connection under `secure`, once its handshake is done (once). */
  take(secure: tls.TLSSocket): A | undefined;
}

const tupleOf = (socket: net.Socket): string =>
  `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}|${socket.localPort}`;

/**
 * Admits every connection of `server` (a tls.Server or an https.Server) as it arrives, closes one whose
 * handshake fails or times out (the server's `handshakeTimeout`), and logs those failures rate-limited.
 * The TLS socket node builds over an admitted TCP socket is matched to it by their common 4-tuple
 * (both are one kernel connection, open at the same time), only while its handshake runs: this is
 * bookkeeping of the caps, no identity.
 */
export function guardTlsServer<A extends { disconnect(): void }>(
  server: tls.Server,
  parts: TlsGuardParts<A>,
): TlsGuard<A> {
  const pending = new Map<string, A>();
  const failures = createRateLimitedLog((message) => parts.logger?.warn(message));
  // before node wraps the socket in TLS: a refused connection costs no handshake
  server.prependListener('connection', (socket: net.Socket) => {
    const admitted = parts.admit(socket);
    if (admitted === undefined) {
      socket.on('error', () => {});
      socket.destroy();
      return;
    }
    const tuple = tupleOf(socket);
    pending.set(tuple, admitted);
    socket.once('close', () => {
      if (pending.get(tuple) === admitted) pending.delete(tuple);
      admitted.disconnect();
    });
  });
  server.on('tlsClientError', (error: NodeJS.ErrnoException, socket: tls.TLSSocket) => {
    const address = socket.remoteAddress;
    const from = `${address}:${socket.remotePort}`;
    // node leaves the socket open when someone listens for this event
    socket.destroy();
    // a connection refused above (already logged as refused) fails its handshake this way: not news
    if (error.code === 'ECONNRESET' && address === undefined) return;
    const hint = /wrong version number|http request|unknown protocol/i.test(error.message)
      ? ' (a plaintext client on a TLS port?)'
      : error.code === 'ERR_TLS_HANDSHAKE_TIMEOUT'
        ? ' (server.tls.handshakeTimeoutMs)'
        : '';
    failures.warn(
      'tls-handshake',
      `TLS handshake from ${from} on ${parts.where()} failed: ${error.message.replace(/\s+/g, ' ').trim()}${hint}`,
    );
  });
  return {
    take(secure) {
      const tuple = tupleOf(secure);
      const admitted = pending.get(tuple);
      pending.delete(tuple);
      return admitted;
    },
  };
}
