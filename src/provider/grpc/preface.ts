/**
 * Tells a connection to the provider's own port that speaks HTTP/2 (gRPC, Triple) from one that speaks
 * Callisto's protocol, the way Dubbo 3 serves Triple beside its own protocol:
 *
 * - over TLS, by what ALPN negotiated: `h2` is HTTP/2, anything else or nothing (Callisto's consumers
 *   offer none) is Callisto's protocol — decided before a byte is read, at no cost;
 * - in cleartext, by the first byte: Callisto frames open with the magic `0xCA`, HTTP/2 with its
 *   connection preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n` (RFC 9113 §3.4). A first byte other than `P`
 *   is Callisto's at once (no copy, no wait); a `P` waits for the 24 bytes of the preface, at most
 *   `prefaceTimeoutMs` (then the connection is closed), and a connection whose bytes stop matching it
 *   goes to Callisto's decoder, which refuses it as it refuses any bad magic. A connection that sends
 *   nothing for `silenceMs` is Callisto's (its own heartbeats and timeouts apply from then on).
 *
 * The bytes read to decide are put back (`unshift`) before the connection is handed over, so each
 * server reads the connection from its first byte. Only a `net.Socket` (tcp, tls) can be put back: any
 * other ByteStream (the memory transport) is Callisto's.
 */
import type net from 'node:net';
import type { ByteStream } from '../../transport/transport.js';

export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface PrefaceRoutes {
  /** The connection speaks HTTP/2: hand the socket to the HTTP/2 server. */
  http2(socket: net.Socket): void;
  /** The connection speaks Callisto's protocol (or nothing known): serve it as before. */
  callisto(): void;
  /** The connection sent part of the preface and then nothing for `timeoutMs`: it is closed. */
  stalled?(): void;
}

/** Whether `stream` can be told apart (a socket that can put bytes back). */
function isSocket(stream: ByteStream): stream is ByteStream & net.Socket {
  return typeof (stream as Partial<net.Socket>).unshift === 'function';
}

/** How long the first bytes may take. */
export interface PrefaceTimes {
  /** A connection that sent part of the preface must complete it within this, or it is closed. */
  readonly prefaceTimeoutMs: number;
  /**
   * A connection that sent nothing for this long is Callisto's: HTTP/2 clients send the preface at
   * once (RFC 9113 §3.4), so only a quiet Callisto consumer waits; from then on its heartbeats and
   * timeouts run as on a connection that was never told apart.
   */
  readonly silenceMs: number;
}

/** A connection still being told apart. */
export interface PrefaceSniff {
  /**
   * Decides now, without waiting for more bytes (the provider is shutting down): a connection that
   * sent nothing yet is Callisto's, so it is told "going away" and its calls still on the wire are
   * answered; one part-way through the HTTP/2 preface is closed. Nothing once decided.
   */
  settle(): void;
}

const DECIDED: PrefaceSniff = { settle() {} };

export function routeByPreface(stream: ByteStream, routes: PrefaceRoutes, times: PrefaceTimes): PrefaceSniff {
  if (!isSocket(stream)) {
    routes.callisto();
    return DECIDED;
  }
  const socket = stream;
  const alpn = (socket as { alpnProtocol?: string | false }).alpnProtocol;
  if (alpn === 'h2') {
    routes.http2(socket);
    return DECIDED;
  }
  // a TLS connection that negotiated something else, or nothing (Callisto's consumers offer no ALPN):
  // Callisto's, at once (node's HTTP/2 server refuses TLS without h2 anyway)
  if (typeof alpn === 'string' || alpn === false) {
    routes.callisto();
    return DECIDED;
  }
  let seen: Buffer = Buffer.alloc(0);
  let timer: NodeJS.Timeout | undefined;
  let decided = false;
  const decide = (http2: boolean): void => {
    decided = true;
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.pause();
    if (seen.length > 0) socket.unshift(seen);
    if (http2) routes.http2(socket);
    else {
      routes.callisto();
      socket.resume();
    }
  };
  const onData = (chunk: Buffer): void => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, HTTP2_PREFACE.length);
    if (seen.compare(HTTP2_PREFACE, 0, compared, 0, compared) !== 0) decide(false);
    else if (seen.length >= HTTP2_PREFACE.length) decide(true);
  };
  const onClose = (): void => {
    clearTimeout(timer);
    socket.off('data', onData);
  };
  // nothing at all for silenceMs: Callisto's connection takes it; part of the preface and then
  // nothing for prefaceTimeoutMs: closed
  const stalled = (): void => {
    decided = true;
    socket.off('data', onData);
    routes.stalled?.();
    socket.destroy();
  };
  timer = setTimeout(() => {
    if (seen.length === 0) decide(false);
    else timer = setTimeout(stalled, Math.max(0, times.prefaceTimeoutMs - times.silenceMs));
  }, times.silenceMs);
  timer.unref();
  socket.on('data', onData);
  socket.once('close', onClose);
  return {
    settle() {
      if (decided || socket.destroyed) return;
      if (seen.length === 0) decide(false);
      else {
        decided = true;
        clearTimeout(timer);
        socket.off('data', onData);
        socket.destroy();
      }
    },
  };
}
