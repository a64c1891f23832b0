/**
 * Raw HTTP/2 frames (RFC 9113) and HPACK literals (RFC 7541) for the gRPC entry's hostile tests: what a
 * misbehaving client writes on a plain TCP socket, where node:http2's client would not misbehave enough
 * (it answers SETTINGS, limits its own PINGs, never resets streams in a burst).
 */
import net from 'node:net';

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** One frame: 9-byte header, then the payload. */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = Buffer.alloc(0),
): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an `prefixBits`-bit prefix, the first byte's high bits `mask`. */
function hpackInt(value: number, prefixBits: number, mask: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([mask | value]);
  const bytes = [mask | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

const hpackString = (text: string): Buffer =>
  Buffer.concat([hpackInt(Buffer.byteLength(text), 7, 0), Buffer.from(text)]);

/** A literal header field without indexing (new name). */
export function literal(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), hpackString(name), hpackString(value)]);
}

/** A literal header field with incremental indexing (new name): it enters the dynamic table. */
export function indexedLiteral(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]);
}

/** An indexed header field (a reference to the static or dynamic table). */
export function indexed(index: number): Buffer {
  return hpackInt(index, 7, 0x80);
}

/** The header block of a gRPC request for `path`. */
export function grpcRequestBlock(path: string, extra: Buffer[] = []): Buffer {
  return Buffer.concat([
    literal(':method', 'POST'),
    literal(':scheme', 'http'),
    literal(':path', path),
    literal(':authority', 'localhost'),
    literal('content-type', 'application/grpc'),
    literal('te', 'trailers'),
    ...extra,
  ]);
}

/** A raw client socket that has sent the preface and an empty SETTINGS frame. */
export function rawH2(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves once `socket` closed (the server cut it), or after `ms` with false. */
export function closedWithin(socket: net.Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) {
      resolve(true);
      return;
    }
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
