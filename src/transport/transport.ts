/**
 * The transport extension point (kind `transport`): how bytes get from one process to another. A
 * transport listens and connects; what it hands over is a {@link ByteStream}, a narrow duplex of bytes.
 * Framing, heartbeats, limits and compression sit above it (protocol/framed-connection.ts), written once
 * for every transport, so a transport only moves bytes: `tcp` (node:net), `memory` (an in-process pair,
 * no sockets) and, later, `tls`.
 *
 * A provider's server listens on the transport its configuration names (`server.transport`); its
 * registry record names that transport, and a consumer connects to the provider with it.
 */
import type { PeerCertificate } from '../security/peer-certificate.js';

/**
 * One connection's bytes, either side: the subset of `net.Socket` that Callisto uses, so that a TCP
 * socket is one as it is. Events: `connect` (the connecting side, once open), `data` (a chunk), `drain`
 * (the queue emptied after `write` returned false), `error` (followed by `close`) and `close` (always,
 * once, whatever ended it).
 */
export interface ByteStream {
  /** The peer's host (an IP address for TCP), once known. */
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  /**
   * The client certificate this very connection presented in its TLS handshake (mutual TLS), on the
   * accepting side; undefined without one and on transports without TLS. An identity comes from here
   * only — never from an address, which another connection can have had (or have) too.
   */
  readonly peerCertificate?: PeerCertificate | undefined;
  /** Bytes written but not yet handed to the peer. */
  readonly writableLength: number;
  readonly destroyed: boolean;
  /** `end()` was called. */
  readonly writableEnded: boolean;
  /** Queues bytes; false when the queue is past its high-water mark (wait for `drain`). */
  write(chunk: Uint8Array): boolean;
  /**
   * Optional: holds the writes that follow until `uncork`, which hands them over together (one
   * `writev` on a socket). A stream without it writes each chunk as it comes.
   */
  cork?(): void;
  uncork?(): void;
  /** Closes this side for writing once what is queued is sent; the peer then closes too. */
  end(): void;
  /** Closes at once; what is queued is dropped. */
  destroy(): void;
  /** Stops delivering `data` (the peer's writes then queue up: backpressure). */
  pause(): this;
  resume(): this;
  on(event: 'data', listener: (chunk: Uint8Array) => void): this;
  on(event: 'connect' | 'drain' | 'close', listener: () => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  once(event: 'connect' | 'drain' | 'close', listener: () => void): this;
  once(event: 'error', listener: (error: Error) => void): this;
}

/** Where to connect. Transports may take more (a TLS transport its server name), in their own options. */
export interface ConnectOptions {
  readonly host: string;
  readonly port: number;
}

/** Where to listen: `port` 0 picks a free one. */
export interface ListenOptions<A extends Admitted = Admitted> {
  readonly host: string;
  readonly port: number;
  /**
   * Asked as each connection arrives, before a byte of it is read: what the listener's owner holds for
   * it (its place under the connection caps), or undefined to close it at once. A transport that reads
   * before it hands a connection over (a TLS handshake) must ask here, so that connections still in
   * their handshake count against the caps, and pass the answer to `onConnection`; it calls
   * `disconnect()` when such a connection closes before it was handed over (a failed or timed-out
   * handshake). A transport that hands connections over as they arrive (tcp, memory) may leave it
   * unasked: its owner then admits in `onConnection`.
   */
  readonly admit?: ((from: { readonly address: string; readonly port: number }) => A | undefined) | undefined;
  /**
   * Application protocols a TLS transport offers by ALPN, in order of preference (the provider offers
   * `h2` for its gRPC entry); the one a connection negotiated is its socket's `alpnProtocol`. A client
   * that offers none (Callisto's consumers) is served as before. Transports without TLS ignore it.
   */
  readonly alpnProtocols?: readonly string[] | undefined;
}

/** What a listener's owner holds for an admitted connection; given back once it closes. Idempotent. */
export interface Admitted {
  disconnect(): void;
}

/** A listening endpoint of a transport. */
export interface TransportListener {
  /** The port listened on (the real one when 0 was asked). */
  readonly port: number;
  /** Stops accepting connections (those accepted stay open); resolves once stopped. Idempotent. */
  close(): Promise<void>;
}

export interface Transport {
  /** The transport's name, as configuration and provider records write it (`tcp`, `memory`). */
  readonly name: string;
  /**
   * Starts connecting; the stream emits `connect` once open, or `error` and `close` when it cannot be.
   * May throw synchronously for an address it can never reach (a port out of range).
   */
  connect(options: ConnectOptions): ByteStream;
  /**
   * Listens; `onConnection` receives every accepted stream, with what `options.admit` answered for it
   * when the transport asked. Rejects when the address is taken.
   */
  listen<A extends Admitted>(
    options: ListenOptions<A>,
    onConnection: (stream: ByteStream, admitted?: A) => void,
  ): Promise<TransportListener>;
}

/** Builds the transport of an app (kind `transport`); one instance serves the whole app. */
export type TransportFactory = () => Transport;

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    transport: TransportFactory;
  }
}

/** The transport used when none is named: TCP. */
export const DEFAULT_TRANSPORT = 'tcp';

/**
 * The address of a provider as the consumer keys it: `host:port` over TCP, `<transport>://host:port`
 * over any other transport (one host:port may be served over two transports).
 */
export function transportAddress(host: string, port: number, transport: string = DEFAULT_TRANSPORT): string {
  return transport === DEFAULT_TRANSPORT ? `${host}:${port}` : `${transport}://${host}:${port}`;
}
