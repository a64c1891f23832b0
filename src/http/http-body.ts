/**
 * Reads a request's body within its bounds: a declared length over `maxBodyBytes` is refused before a
 * byte is read, a streamed (chunked) body as soon as it passes the bound, and a body that has not
 * arrived within `bodyTimeoutMs` of its headers is refused too (swept, see `createBodyReader`).
 *
 * Chunks are copied into one buffer as they arrive (see `createBodyBuffer`), never kept: a body sent as
 * a million one-byte chunks would otherwise hold a million Buffer objects (and the socket reads they
 * are views of), some 70 times its size. The memory a body holds is at most twice its bytes.
 */
import type { IncomingMessage } from 'node:http';
import { HttpRefusal } from './http-request.js';

export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

/** Reads request bodies within the limits; one per server. */
export interface BodyReader {
  /** Resolves with the body, or rejects with an HttpRefusal (413, 408, 400). */
  read(request: IncomingMessage): Promise<Buffer>;
  /** Stops the sweep (bodies still being read are refused as late when next swept: none are). */
  close(): void;
}

interface PendingBody {
  readonly deadline: number;
  late(): void;
}

/**
 * A reader whose body timeouts are one sweep for every body being read (an interval of a quarter of
 * `bodyTimeoutMs`, at most 1 s, running only while a body is pending) rather than a timer per request:
 * a body is refused between `bodyTimeoutMs` and a quarter more after its headers.
 */
export function createBodyReader(limits: BodyLimits, where = 'server.http'): BodyReader {
  const { maxBodyBytes, bodyTimeoutMs } = limits;
  const pending = new Set<PendingBody>();
  let sweep: NodeJS.Timeout | undefined;
  const sweepEvery = Math.max(5, Math.min(1_000, Math.floor(bodyTimeoutMs / 4)));
  const sweepLate = (): void => {
    const now = Date.now();
    for (const body of pending) if (body.deadline <= now) body.late();
    if (pending.size === 0 && sweep !== undefined) {
      clearInterval(sweep);
      sweep = undefined;
    }
  };
  const lateMessage = `the request body did not arrive within ${bodyTimeoutMs} ms (${where}.bodyTimeoutMs)`;

  return {
    read(request) {
      const framing = http10Framing(request);
      if (framing !== undefined) return Promise.reject(framing);
      const declared = request.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        return Promise.reject(tooLarge(maxBodyBytes, `${declared} bytes declared`, where));
      }
      return new Promise<Buffer>((resolve, reject) => {
        const body = createBodyBuffer(maxBodyBytes);
        const finish = (error: HttpRefusal | undefined): void => {
          pending.delete(entry);
          request.off('data', onData);
          request.off('end', onEnd);
          request.off('error', onError);
          request.off('close', onClose);
          if (error === undefined) resolve(body.bytes());
          else {
            body.clear();
            // stop reading: whatever else it sends is not wanted (the answer closes the connection)
            request.pause();
            reject(error);
          }
        };
        const onData = (chunk: Buffer): void => {
          if (body.length + chunk.length > maxBodyBytes) finish(tooLarge(maxBodyBytes, 'more sent', where));
          else body.append(chunk);
        };
        const onEnd = (): void => finish(undefined);
        const onError = (): void =>
          finish(new HttpRefusal(400, 'BadRequest', 'the request body could not be read'));
        const onClose = onError;
        const entry: PendingBody = {
          deadline: Date.now() + bodyTimeoutMs,
          late: () => finish(new HttpRefusal(408, 'Timeout', lateMessage)),
        };
        pending.add(entry);
        if (sweep === undefined) {
          sweep = setInterval(sweepLate, sweepEvery);
          sweep.unref();
        }
        request.on('data', onData);
        request.on('end', onEnd);
        request.on('error', onError);
        request.on('close', onClose);
      });
    },
    close() {
      if (sweep !== undefined) clearInterval(sweep);
      sweep = undefined;
    },
  };
}

/**
 * HTTP/1.0 has no chunked bodies: a 1.0 request with `transfer-encoding` has a length no two parsers
 * need agree on (RFC 9112 §6.1: treat it as faulty framing, then close). Refused with 400 before
 * anything runs, whatever follows it, so that what is answered does not depend on the bytes after it.
 */
function http10Framing(request: IncomingMessage): HttpRefusal | undefined {
  if (request.httpVersion !== '1.0' || request.headers['transfer-encoding'] === undefined) return undefined;
  return new HttpRefusal(
    400,
    'BadRequest',
    'an HTTP/1.0 request with transfer-encoding (HTTP/1.0 has no chunked bodies): send HTTP/1.1, or content-length',
  );
}

/** The bytes of one body, copied into a buffer that doubles as they arrive (never beyond `max`). */
export interface BodyBuffer {
  readonly length: number;
  append(chunk: Uint8Array): void;
  /** The bytes so far (a view of the buffer, no copy). */
  bytes(): Buffer;
  clear(): void;
}

/** The first allocation of a body: small bodies (most) cost one buffer of this size or less. */
const FIRST_BYTES = 16 * 1024;

/**
 * A body buffer: the first chunk's bytes (or {@link FIRST_BYTES}, the larger) at first, doubling when
 * full, capped at `max`; grown only by bytes that arrived, never from a declared length. Holds at most
 * twice the bytes appended (plus the first allocation) whatever the size of the chunks.
 */
export function createBodyBuffer(max: number): BodyBuffer {
  let buffer: Buffer | undefined;
  let length = 0;
  return {
    get length() {
      return length;
    },
    append(chunk) {
      const needed = length + chunk.length;
      if (buffer === undefined || needed > buffer.length) {
        let size = Math.max(FIRST_BYTES, buffer === undefined ? 0 : buffer.length * 2);
        while (size < needed) size *= 2;
        const grown = Buffer.allocUnsafe(Math.min(Math.max(size, needed), Math.max(max, needed)));
        if (buffer !== undefined) buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      buffer.set(chunk, length);
      length = needed;
    },
    bytes: () => (buffer === undefined ? Buffer.alloc(0) : buffer.subarray(0, length)),
    clear() {
      buffer = undefined;
      length = 0;
    },
  };
}

function tooLarge(maxBodyBytes: number, what: string, where: string): HttpRefusal {
  return new HttpRefusal(
    413,
    'BadRequest',
    `the request body is larger than ${maxBodyBytes} bytes (${what}; ${where}.maxBodyBytes)`,
  );
}
