/**
 * Reads a request's body within its bounds: a declared length over `maxBodyBytes` is refused before a
 * byte is read, a streamed (chunked) body as soon as it passes the bound, and a body that has not
 * arrived within `bodyTimeoutMs` of its headers is refused too (swept, see `createBodyReader`). Chunks are kept as they arrive and joined
 * once: the memory a body holds is the bytes it sent.
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
      const declared = request.headers['content-length'];
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        return Promise.reject(tooLarge(maxBodyBytes, `${declared} bytes declared`, where));
      }
      return new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        let length = 0;
        const finish = (error: HttpRefusal | undefined): void => {
          pending.delete(entry);
          request.off('data', onData);
          request.off('end', onEnd);
          request.off('error', onError);
          request.off('close', onClose);
          if (error === undefined) resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length));
          else {
            chunks.length = 0;
            // stop reading: whatever else it sends is not wanted (the answer closes the connection)
            request.pause();
            reject(error);
          }
        };
        const onData = (chunk: Buffer): void => {
          length += chunk.length;
          if (length > maxBodyBytes) finish(tooLarge(maxBodyBytes, 'more sent', where));
          else chunks.push(chunk);
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

function tooLarge(maxBodyBytes: number, what: string, where: string): HttpRefusal {
  return new HttpRefusal(
    413,
    'BadRequest',
    `the request body is larger than ${maxBodyBytes} bytes (${what}; ${where}.maxBodyBytes)`,
  );
}
