/**
 * The `tls` transport: TCP with TLS (node:tls), for a provider that serves TLS only and the consumers
 * that call it. One instance per app holds the app's server options (`server.tls`) and client options
 * (`consumer.tls`), both optional:
 *
 * - listening needs the server options; the server's certificate files are polled every
 *   `reloadIntervalMs` and, when one changed, loaded into a new secure context
 *   (`server.setSecureContext`): new handshakes use it, open connections are not touched. A reload that
 *   fails (a half-written file, a key that does not match) keeps the old context and is logged;
 * - connecting without client options is refused at once with the fix (no plaintext fallback, no hang);
 *   a connection counts as open (`connect`) only once the handshake verified the provider's certificate,
 *   and a failed handshake says why (expired, unknown CA, wrong host name, a plaintext port);
 * - the peer certificate of every open server connection is kept by its remote `host:port`
 *   (`peerCertificate`), for the mutual-TLS authenticator.
 *
 * Server sockets are handed up as they are (a TLSSocket is a ByteStream); client sockets are wrapped, so
 * that `connect` means "handshake done".
 */
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import tls from 'node:tls';
import type { Logger } from '../observability/logger.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import {
  type ClientTlsOptions,
  clientContextOptions,
  type PemSource,
  type ServerTlsOptions,
  serverContextOptions,
} from './tls-options.js';
import type { ByteStream, Transport, TransportListener } from './transport.js';

export type { PeerCertificate };

export interface TlsTransport extends Transport {
  /** The client certificate of the open server connection from `remoteAddress` (`host:port`). */
  peerCertificate(remoteAddress: string): PeerCertificate | undefined;
  /** Reloads the server's certificate files now if they changed; true when a new context was loaded. */
  reloadNow(): boolean;
}

export interface TlsTransportParts {
  readonly server?: ServerTlsOptions | undefined;
  readonly client?: ClientTlsOptions | undefined;
  readonly logger?: Logger | undefined;
  /** Told once a reload loaded new certificates (tests wait for it). */
  readonly onReload?: ((side: 'server' | 'client') => void) | undefined;
}

/** The message of a consumer without `consumer.tls` meeting a TLS-only provider. */
export function noClientTlsMessage(host: string, port: number): string {
  return `provider tls://${host}:${port} serves TLS only and this consumer has no TLS configuration: set consumer.tls.ca (the CA that signed the provider's certificate; file or PEM), or consumer.tls.enabled: true to trust the system's CAs`;
}

/** Change detection over the file sources of a set of PEM values (mtime, size and inode). */
function fileStamp(sources: readonly (PemSource | undefined)[]): () => string {
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

/** Why a handshake failed, in words a user acts on. */
export function describeTlsFailure(error: Error & { code?: string | undefined }, where: string): string {
  const code = error.code ?? '';
  const hint =
    TLS_HINTS[code] ??
    (/wrong version number|packet length too long/i.test(error.message)
      ? 'the other side does not speak TLS (a plaintext port?)'
      : undefined);
  return `TLS handshake with ${where} failed: ${error.message}${code && !error.message.includes(code) ? ` (${code})` : ''}${hint ? ` — ${hint}` : ''}`;
}

const TLS_HINTS: Record<string, string> = {
  CERT_HAS_EXPIRED: "the provider's certificate has expired: renew it",
  CERT_NOT_YET_VALID: "the provider's certificate is not valid yet (its start date is in the future)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the provider's certificate is not signed by a CA in consumer.tls.ca (a wrong CA?)",
  SELF_SIGNED_CERT_IN_CHAIN: "the provider's certificate chain ends in a CA not in consumer.tls.ca",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the provider's certificate is self-signed and not in consumer.tls.ca",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "the CA that signed the provider's certificate is not in consumer.tls.ca (a wrong CA?)",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the provider's certificate is not for this host name: connect by a name it lists, or set consumer.tls.servername",
  ECONNRESET:
    'the provider closed the connection during the handshake: is it serving plaintext on this port, or did it refuse our certificate?',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the other side does not speak TLS (a plaintext port?)',
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    'the provider requires a client certificate (mutual TLS): set consumer.tls.cert and consumer.tls.key',
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA:
    'the provider does not trust our client certificate: it is not signed by a CA in its server.tls.ca',
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED: 'the provider refused our client certificate: it has expired',
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: 'the provider refused our client certificate',
};

/** A client TLS socket as a ByteStream whose `connect` means the handshake verified the provider. */
class TlsClientStream extends EventEmitter implements ByteStream {
  readonly #socket: tls.TLSSocket;
  #secure = false;
  /** Bytes came from the provider (errors from then on are not the handshake's). */
  #received = false;
  #failed = false;
  #endedHere = false;

  constructor(socket: tls.TLSSocket, where: string) {
    super();
    this.#socket = socket;
    socket.on('secureConnect', () => {
      this.#secure = true;
      this.emit('connect');
    });
    socket.on('data', (chunk: Buffer) => {
      this.#received = true;
      this.emit('data', chunk);
    });
    socket.on('drain', () => this.emit('drain'));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      this.#failed = true;
      if (this.#received) this.emit('error', error);
      else {
        const clear = Object.assign(new Error(describeTlsFailure(error, where)), {
          code: error.code,
          cause: error,
        });
        this.emit('error', clear);
      }
    });
    socket.on('close', () => {
      if (this.#secure && !this.#received && !this.#failed && !this.#endedHere) {
        // TLS 1.3: the provider checks our certificate after our side of the handshake is done, and
        // a refusal reaches us as a close before any byte
        this.emit(
          'error',
          Object.assign(
            new Error(
              `TLS connection to ${where} closed by the provider right after the handshake, before any answer: it may have refused our client certificate (mutual TLS: set consumer.tls.cert and consumer.tls.key, signed by a CA the provider's server.tls.ca trusts)`,
            ),
            { code: 'ERR_TLS_CLOSED_AFTER_HANDSHAKE' },
          ),
        );
      }
      this.emit('close');
    });
  }

  get remoteAddress() {
    return this.#socket.remoteAddress;
  }
  get remotePort() {
    return this.#socket.remotePort;
  }
  get writableLength() {
    return this.#socket.writableLength;
  }
  get destroyed() {
    return this.#socket.destroyed;
  }
  get writableEnded() {
    return this.#socket.writableEnded;
  }
  write(chunk: Uint8Array): boolean {
    return this.#socket.write(chunk);
  }
  end(): void {
    this.#endedHere = true;
    this.#socket.end();
  }
  destroy(): void {
    this.#endedHere = true;
    this.#socket.destroy();
  }
  pause(): this {
    this.#socket.pause();
    return this;
  }
  resume(): this {
    this.#socket.resume();
    return this;
  }
}

/** A socket's certificate as the server keeps it. */
function peerOf(socket: tls.TLSSocket): PeerCertificate | undefined {
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

export function createTlsTransport(parts: TlsTransportParts = {}): TlsTransport {
  const { server: serverOptions, client: clientOptions, logger } = parts;
  const peers = new Map<string, PeerCertificate>();
  const servers = new Set<tls.Server>();

  // Server side: one secure context, replaced when the files change.
  const serverStamp = serverOptions
    ? fileStamp([serverOptions.key, serverOptions.cert, serverOptions.ca])
    : undefined;
  let serverSeen = serverStamp?.();
  let serverContext: tls.SecureContextOptions | undefined;
  const reloadServer = (): boolean => {
    if (serverOptions === undefined || serverStamp === undefined) return false;
    const stamp = serverStamp();
    if (stamp === serverSeen) return false;
    serverSeen = stamp;
    let next: tls.SecureContextOptions;
    try {
      next = serverContextOptions(serverOptions);
      tls.createSecureContext(next);
    } catch (error) {
      logger?.error(`TLS certificates not reloaded (keeping the ones in use): ${(error as Error).message}`);
      return false;
    }
    serverContext = next;
    for (const server of servers) server.setSecureContext(next);
    logger?.info('TLS certificates reloaded (server): new connections use them, open ones are kept');
    parts.onReload?.('server');
    return true;
  };

  // Client side: one secure context, rebuilt before a new connection when the files changed.
  const clientStamp = clientOptions
    ? fileStamp([clientOptions.ca, clientOptions.cert, clientOptions.key])
    : undefined;
  let clientSeen = clientStamp?.();
  let clientCheckedAt = Date.now();
  let clientContext: tls.SecureContext | undefined;
  const secureContext = (): tls.SecureContext => {
    const options = clientOptions!;
    const now = Date.now();
    if (
      clientContext !== undefined &&
      options.reloadIntervalMs > 0 &&
      now - clientCheckedAt >= options.reloadIntervalMs
    ) {
      clientCheckedAt = now;
      const stamp = clientStamp!();
      if (stamp !== clientSeen) {
        clientSeen = stamp;
        try {
          clientContext = tls.createSecureContext(clientContextOptions(options));
          logger?.info('TLS certificates reloaded (consumer): new connections use them');
          parts.onReload?.('client');
        } catch (error) {
          logger?.error(
            `TLS certificates not reloaded (keeping the ones in use): ${(error as Error).message}`,
          );
        }
      }
    }
    clientContext ??= tls.createSecureContext(clientContextOptions(options));
    return clientContext;
  };

  return {
    name: 'tls',
    connect({ host, port }) {
      if (clientOptions === undefined) {
        throw Object.assign(new Error(noClientTlsMessage(host, port)), { code: 'ERR_NO_TLS_CONFIG' });
      }
      const socket = tls.connect({
        host,
        port,
        secureContext: secureContext(),
        rejectUnauthorized: clientOptions.rejectUnauthorized,
        ...(clientOptions.servername ? { servername: clientOptions.servername } : {}),
      });
      socket.setNoDelay(true);
      socket.setKeepAlive(true);
      return new TlsClientStream(socket, `tls://${host}:${port}`);
    },
    listen({ host, port }, onConnection) {
      if (serverOptions === undefined) {
        return Promise.reject(
          new Error(
            'the tls transport has no server certificate: set server.tls.key and server.tls.cert (files or PEM)',
          ),
        );
      }
      serverContext ??= serverContextOptions(serverOptions);
      const server = tls.createServer(
        {
          ...serverContext,
          requestCert: serverOptions.requestCert,
          rejectUnauthorized: serverOptions.requestCert && serverOptions.rejectUnauthorized,
        },
        (socket) => {
          socket.setNoDelay(true);
          const remote = `${socket.remoteAddress}:${socket.remotePort}`;
          if (serverOptions.requestCert) {
            const peer = peerOf(socket);
            if (peer !== undefined) {
              peers.set(remote, peer);
              socket.once('close', () => {
                if (peers.get(remote) === peer) peers.delete(remote);
              });
            }
          }
          onConnection(socket satisfies ByteStream);
        },
      );
      server.on('tlsClientError', (error: NodeJS.ErrnoException, socket) => {
        const from = `${socket.remoteAddress}:${socket.remotePort}`;
        logger?.warn(
          `TLS handshake from ${from} failed: ${error.message}${/wrong version number|http request|unknown protocol/i.test(error.message) ? ' (a plaintext client on a TLS port?)' : ''}`,
        );
      });
      servers.add(server);
      let timer: NodeJS.Timeout | undefined;
      if (serverOptions.reloadIntervalMs > 0) {
        timer = setInterval(reloadServer, serverOptions.reloadIntervalMs);
        timer.unref();
      }
      return new Promise<TransportListener>((resolve, reject) => {
        const failed = (error: Error) => {
          servers.delete(server);
          if (timer) clearInterval(timer);
          reject(error);
        };
        server.once('error', failed);
        server.listen(port, host, () => {
          server.off('error', failed);
          const address = server.address();
          const listening = address !== null && typeof address === 'object' ? address.port : port;
          let closed: Promise<void> | undefined;
          resolve({
            port: listening,
            close: () => {
              closed ??= new Promise<void>((done) => {
                if (timer) clearInterval(timer);
                servers.delete(server);
                server.close(() => done());
              });
              return closed;
            },
          });
        });
      });
    },
    peerCertificate(remoteAddress) {
      return peers.get(remoteAddress);
    },
    reloadNow: reloadServer,
  };
}
