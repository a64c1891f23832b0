/**
 * The small HTTP pieces the dashboard's server needs: JSON answers, a request body read within a byte
 * limit, the token check, and the checks that keep other web pages and re-bound DNS names from driving
 * a dashboard on this machine.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An HTTP status with a message for the page. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

export function sendError(response: ServerResponse, error: HttpError): void {
  sendJson(response, error.status, { error: error.message });
}

/** The body, refused with 413 past `maxBytes` (from its length header, or as it arrives). */
export function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    return Promise.reject(new HttpError(413, `the request is larger than ${maxBytes} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        request.off('data', onData);
        request.resume();
        reject(new HttpError(413, `the request is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.once('error', reject);
  });
}

export async function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
  const type = request.headers['content-type'] ?? '';
  // a JSON content type cannot be sent across origins without a preflight this server never answers
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError(415, 'send the request as application/json');
  }
  const text = await readBody(request, maxBytes);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON');
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** A token check in constant time (both sides hashed to the same length first). */
export function createTokenCheck(token: string | undefined): (request: IncomingMessage) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (request) => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    return match !== null && timingSafeEqual(digest(match[1]!), expected);
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

export const isLoopback = (host: string) => LOOPBACK_NAMES.has(host) || host.startsWith('127.');

/** The host name of a Host header (`[::1]:7070` -> `[::1]`, `localhost:7070` -> `localhost`). */
function hostName(header: string): string {
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1);
  const colon = header.lastIndexOf(':');
  return (colon === -1 ? header : header.slice(0, colon)).toLowerCase();
}

/**
 * Refuses a request a web page elsewhere could have made: for a dashboard bound to loopback, a Host that
 * is not a loopback name (a DNS name re-bound to 127.0.0.1); for a request that changes something, an
 * Origin other than the dashboard's own.
 */
export function checkOrigin(request: IncomingMessage, boundHost: string): void {
  const host = request.headers.host ?? '';
  if (isLoopback(boundHost) && !isLoopback(hostName(host))) {
    throw new HttpError(421, `this dashboard answers only to loopback names, not "${hostName(host)}"`);
  }
  const origin = request.headers.origin;
  if (request.method !== 'GET' && request.method !== 'HEAD' && origin !== undefined) {
    if (origin !== `http://${host}`) throw new HttpError(403, `requests from ${origin} are refused`);
  }
}
