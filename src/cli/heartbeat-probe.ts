/**
 * One heartbeat round trip to a provider, as the wire protocol defines it (docs/protocol.md,
 * "Heartbeats"): a TCP connection (a TLS one, verified, for a provider that serves TLS only), a 20-byte
 * ping frame (kind 2, no flags), and the provider's pong (the same request id, flag bit 2). Written from
 * the documented frame layout, so it needs nothing from the framework's internals. Bounded: one
 * connection, `timeoutMs`, and at most 64 KiB read.
 */
import net from 'node:net';
import tls from 'node:tls';
import { describeTlsFailure } from '../internal.js';

const HEADER_BYTES = 20;
const MAGIC = [0xca, 0x11] as const;
const VERSION = 1;
const KIND_HEARTBEAT = 2;
const KIND_EVENT = 3;
const FLAG_PONG = 4;
/** Bytes read before a pong at most (a provider sends nothing else unasked but a small event). */
const MAX_READ_BYTES = 64 * 1024;

export type ProbeResult =
  | {
      readonly ok: true;
      readonly connectMs: number;
      readonly rttMs: number;
      /** The provider's load report the pong carried (`callisto-load`, docs/protocol.md), if any. */
      readonly load?: string;
    }
  | { readonly ok: false; readonly problem: string };

/** The `callisto-load` value in a pong's metadata (uint16 count, then uint16-length key and value strings). */
function pongAttachment(meta: Buffer): string | undefined {
  if (meta.length < 2) return undefined;
  let at = 2;
  for (let n = meta.readUInt16BE(0); n > 0 && at + 2 <= meta.length; n--) {
    const keyLength = meta.readUInt16BE(at);
    const key = meta.toString('utf8', at + 2, at + 2 + keyLength);
    at += 2 + keyLength;
    if (at + 2 > meta.length) return undefined;
    const valueLength = meta.readUInt16BE(at);
    const value = meta.toString('utf8', at + 2, at + 2 + valueLength);
    at += 2 + valueLength;
    if (key === 'callisto-load') return value;
  }
  return undefined;
}

/** A ping frame with `requestId`. */
export function pingFrame(requestId: number): Buffer {
  const frame = Buffer.alloc(HEADER_BYTES);
  frame[0] = MAGIC[0];
  frame[1] = MAGIC[1];
  frame[2] = VERSION;
  frame[3] = KIND_HEARTBEAT;
  frame.writeUInt32BE(requestId, 8);
  return frame;
}

/** A failure to reach the port at all (before any TLS could be spoken). */
const isConnectFailure = (error: NodeJS.ErrnoException): boolean =>
  ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT'].includes(
    error.code ?? '',
  );

/** Why a connection failed, in plain words. */
export function describeSocketError(error: NodeJS.ErrnoException, timeoutMs: number): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused: nothing listens there (the process is gone or listens elsewhere; the entry of a process that died stays until the registry TTL expires)';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host cannot be reached from here (is the announced address, server.advertiseHost, one that others can reach?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was reset (a connection limit of the provider, or not a Callisto provider)';
    case 'ETIMEDOUT':
      return `no answer within ${timeoutMs} ms (a firewall, another network, or a stuck process)`;
    default:
      return `${error.code ?? 'error'}: ${error.message}`;
  }
}

/** How to speak TLS to a provider: the consumer's secure context (its CAs, its certificate). */
export interface ProbeTls {
  readonly secureContext: tls.SecureContext;
  /** Checked against the provider's certificate (and sent as SNI). Default: the host, when a name. */
  readonly servername?: string | undefined;
  readonly rejectUnauthorized: boolean;
}

export interface ProbeTarget {
  readonly host: string;
  readonly port: number;
  /** Set for a provider that serves TLS only: the probe's connection is a verified TLS one. */
  readonly tls?: ProbeTls | undefined;
}

function connect({ host, port, tls: secure }: ProbeTarget): net.Socket {
  if (secure === undefined) return net.connect({ host, port });
  const servername = secure.servername ?? (net.isIP(host) === 0 ? host : undefined);
  return tls.connect({
    host,
    port,
    secureContext: secure.secureContext,
    rejectUnauthorized: secure.rejectUnauthorized,
    ...(servername === undefined ? {} : { servername }),
  });
}

export function probeProvider(target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  const { host, port } = target;
  const secure = target.tls !== undefined;
  return new Promise((resolve) => {
    const requestId = 1 + Math.floor(Math.random() * 0xfffffffe);
    const started = performance.now();
    let connectMs = 0;
    let pingSentAt = 0;
    let received = Buffer.alloc(0);
    let settled = false;
    const socket = connect(target);
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      // one line per problem (OpenSSL's messages end in a line break)
      resolve(result.ok ? result : { ok: false, problem: result.problem.replace(/\s*\n\s*/g, ' ') });
    };
    const timer = setTimeout(
      () =>
        finish({
          ok: false,
          problem:
            connectMs === 0
              ? `no ${secure ? 'TLS connection (handshake done)' : 'connection'} within ${timeoutMs} ms (a firewall, another network, or a stuck host)`
              : `connected, but no answer to a heartbeat within ${timeoutMs} ms (the process is stuck or overloaded)`,
        }),
      timeoutMs,
    );
    // over TLS the connection counts as open once the handshake verified the provider's certificate
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      connectMs = performance.now() - started;
      pingSentAt = performance.now();
      socket.write(pingFrame(requestId));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= HEADER_BYTES) {
        if (received[0] !== MAGIC[0] || received[1] !== MAGIC[1] || received[2] !== VERSION) {
          return finish({
            ok: false,
            problem: 'answered with bytes that are not Callisto frames (another program listens there)',
          });
        }
        const size = HEADER_BYTES + received.readUInt32BE(12) + received.readUInt32BE(16);
        if (size > MAX_READ_BYTES) {
          return finish({
            ok: false,
            problem: `sent a ${size}-byte frame instead of answering the heartbeat`,
          });
        }
        if (received.length < size) break;
        const kind = received[3];
        const flags = received[4]!;
        if (kind === KIND_HEARTBEAT && (flags & FLAG_PONG) !== 0 && received.readUInt32BE(8) === requestId) {
          const load = pongAttachment(
            received.subarray(HEADER_BYTES, HEADER_BYTES + received.readUInt32BE(12)),
          );
          return finish({
            ok: true,
            connectMs,
            rttMs: performance.now() - pingSentAt,
            ...(load === undefined ? {} : { load }),
          });
        }
        if (kind === KIND_EVENT && received.readUInt32BE(12) >= 2) {
          const nameLength = received.readUInt16BE(HEADER_BYTES);
          const name = received.toString('utf8', HEADER_BYTES + 2, HEADER_BYTES + 2 + nameLength);
          if (name === 'goaway')
            return finish({ ok: false, problem: 'is shutting down (it said "going away")' });
        }
        received = received.subarray(size);
      }
      if (received.length > MAX_READ_BYTES) {
        finish({ ok: false, problem: 'sent more than 64 KiB without answering the heartbeat' });
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        problem:
          // TLS 1.3 tells a refused client certificate after the client's handshake is done
          secure && !isConnectFailure(error) && (connectMs === 0 || error.code?.startsWith('ERR_SSL'))
            ? describeTlsFailure(error, `tls://${host}:${port}`)
            : describeSocketError(error, timeoutMs),
      }),
    );
    socket.once('close', () =>
      finish({
        ok: false,
        problem:
          connectMs === 0
            ? secure
              ? 'the connection closed during the TLS handshake (is it serving plaintext on this port, or did it refuse our certificate?)'
              : 'the connection closed before it opened'
            : 'closed the connection without answering the heartbeat (a connection limit, or not a Callisto provider)',
      }),
    );
  });
}
