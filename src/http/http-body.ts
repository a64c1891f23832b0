/**
 * Reads a request's body within its bounds: a declared length over `maxBodyBytes` is refused before a
 * byte is read, a streamed (chunked) body as soon as it passes the bound, and a body that has not
 * arrived within `bodyTimeoutMs` of its headers is refused too. Chunks are kept as they arrive and joined
 * once: the memory a body holds is the bytes it sent.
 */
import type { IncomingMessage } from 'node:http';
import { HttpRefusal } from './http-request.js';

export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
}

/** Resolves with the body, or rejects with an HttpRefusal (413, 408, 400). */
export function readBody(
  request: IncomingMessage,
  limits: BodyLimits,
  where = 'server.http',
): Promise<Buffer> {
  const { maxBodyBytes } = limits;
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    return Promise.reject(tooLarge(maxBodyBytes, `${declared} bytes declared`, where));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const finish = (error: HttpRefusal | undefined): void => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onAborted);
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
    const onAborted = onError;
    const timer = setTimeout(
      () =>
        finish(
          new HttpRefusal(
            408,
            'Timeout',
            `the request body did not arrive within ${limits.bodyTimeoutMs} ms (${where}.bodyTimeoutMs)`,
          ),
        ),
      limits.bodyTimeoutMs,
    );
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('aborted', onAborted);
  });
}

function tooLarge(maxBodyBytes: number, what: string, where: string): HttpRefusal {
  return new HttpRefusal(
    413,
    'BadRequest',
    `the request body is larger than ${maxBodyBytes} bytes (${what}; ${where}.maxBodyBytes)`,
  );
}
