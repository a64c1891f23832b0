/**
 * The `tls` transport: TCP with TLS (node:tls), for a provider that serves TLS only and the consumers
 * that call it. One instance per app holds the app's server options (`server.tls`) and client options
 * (`consumer.tls`), both optional:
 *
 * - listening needs the server options; what every TLS server does alike (certificates reloaded from
 *   their files, connections admitted before their handshake, handshakes timed out, failures logged
 *   rate-limited) is tls-server.ts;
 * - connecting without client options is refused at once with the fix (no plaintext fallback, no hang);
 *   a connection counts as open (`connect`) only once the handshake verified the provider's certificate,
 *   and a failed handshake says why (expired, unknown CA, wrong host name, a plaintext port);
 * - an accepted connection carries the client certificate it presented (`peerCertificate` on the
 *   stream, mutual TLS): the identity belongs to that connection object, never to its address, and
 *   stays the one of its handshake (renegotiation is refused);
 *
 * Server sockets are handed up as they are (a TLSSocket is a ByteStream); client sockets are wrapped, so
 * that `connect` means "handshake done".
 */
import { EventEmitter } from 'node:events';
import tls from 'node:tls';
import type { Logger } from '../observability/logger.js';
import type { PeerCertificate } from '../security/peer-certificate.js';
import { type ClientTlsOptions, clientContextOptions, type ServerTlsOptions } from './tls-options.js';
import {
  createServerTlsContext,
  fileStamp,
  guardTlsServer,
  peerOf,
  type ServerTlsContext,
  tlsServerOptions,
} from './tls-server.js';
import type { Admitted, ByteStream, ListenOptions, Transport, TransportListener } from './transport.js';

export type { PeerCertificate };

export interface TlsTransport extends Transport {
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
  cork(): void {
    this.#socket.cork();
  }
  uncork(): void {
    this.#socket.uncork();
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

export function createTlsTransport(parts: TlsTransportParts = {}): TlsTransport {
  const { server: serverOptions, client: clientOptions, logger } = parts;
  const serverContext: ServerTlsContext | undefined = serverOptions
    ? createServerTlsContext(serverOptions, { logger, onReload: () => parts.onReload?.('server') })
    : undefined;

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
    listen<A extends Admitted>(
      { host, port, admit, alpnProtocols }: ListenOptions<A>,
      onConnection: (stream: ByteStream, admitted?: A) => void,
    ) {
      if (serverOptions === undefined || serverContext === undefined) {
        return Promise.reject(
          new Error(
            'the tls transport has no server certificate: set server.tls.key and server.tls.cert (files or PEM)',
          ),
        );
      }
      const server = tls.createServer({
        ...tlsServerOptions(serverOptions, serverContext),
        ...(alpnProtocols !== undefined && alpnProtocols.length > 0
          ? { ALPNProtocols: [...alpnProtocols] }
          : {}),
      });
      const guard = guardTlsServer<Admitted>(server, {
        admit: (socket) =>
          admit
            ? admit({ address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 })
            : { disconnect() {} },
        logger,
        where: () => `tls://${host}:${listening}`,
      });
      server.on('secureConnection', (socket) => {
        socket.setNoDelay(true);
        // The identity a connection proved is the one of its handshake, for all its life. OpenSSL 3
        // already refuses a client's TLS 1.2 renegotiation (TLS 1.3 has none); this keeps it so under an
        // OpenSSL configured otherwise: an attempt is an error that closes the connection.
        socket.disableRenegotiation();
        const admitted = guard.take(socket);
        const stream: tls.TLSSocket & { peerCertificate?: PeerCertificate | undefined } = socket;
        // the certificate belongs to this socket object: whoever serves it reads it from here
        if (serverOptions.requestCert) stream.peerCertificate = peerOf(socket);
        onConnection(stream satisfies ByteStream, admit ? (admitted as A | undefined) : undefined);
      });
      const untrack = serverContext.track(server);
      let listening = port;
      return new Promise<TransportListener>((resolve, reject) => {
        const failed = (error: Error) => {
          untrack();
          reject(error);
        };
        server.once('error', failed);
        server.listen(port, host, () => {
          server.off('error', failed);
          const address = server.address();
          if (address !== null && typeof address === 'object') listening = address.port;
          let closed: Promise<void> | undefined;
          resolve({
            port: listening,
            close: () => {
              closed ??= new Promise<void>((done) => {
                untrack();
                server.close(() => done());
              });
              return closed;
            },
          });
        });
      });
    },
    reloadNow: () => serverContext?.reloadNow() ?? false,
  };
}
