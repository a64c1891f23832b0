/**
 * What the dashboard's API adds to the HTTP toolkit (src/http/): its errors as `{"error": message}`,
 * a JSON body read within the toolkit's bounds, and the checks that keep other web pages and re-bound
 * DNS names from driving a dashboard on this machine.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP, isIPv4 } from 'node:net';
import type { BodyReader } from '../internal.js';
import { HttpRefusal, sendJson } from '../internal.js';

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

/**
 * The error as `{"error": message}`; `scrub` rewrites the text before it is sent (secrets in
 * addresses). When the request's body was not read to its end, the connection is closed after it.
 */
export function sendError(
  request: IncomingMessage,
  response: ServerResponse,
  error: HttpError,
  scrub?: (text: string) => string,
): void {
  const closeAfter = !request.complete;
  if (closeAfter) {
    response.shouldKeepAlive = false;
    response.once('finish', () => response.socket?.destroySoon());
  }
  sendJson(
    response,
    error.status,
    { error: error.message },
    { scrub, headers: closeAfter ? { connection: 'close' } : {} },
  );
}

/**
 * The body as JSON, read by `bodies` (the toolkit's reader: at most `maxBodyBytes`, from its length
 * header or as it arrives, within `bodyTimeoutMs`). Only `application/json`: a JSON content type
 * cannot be sent across origins without a preflight this server never answers.
 */
export async function readJsonBody(
  request: IncomingMessage,
  bodies: BodyReader,
  maxBytes: number,
): Promise<unknown> {
  const type = request.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError(415, 'send the request as application/json');
  }
  let body: Buffer;
  try {
    body = await bodies.read(request);
  } catch (error) {
    if (!(error instanceof HttpRefusal)) throw error;
    if (error.status === 413) throw new HttpError(413, `the request is larger than ${maxBytes} bytes`);
    throw new HttpError(error.status, error.message);
  }
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new HttpError(400, 'the request body is not valid JSON');
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `name` (a host without its port) is this machine by construction, not by a DNS answer. */
export function isLoopback(name: string): boolean {
  const host = name.toLowerCase();
  if (host === 'localhost' || host === '::1' || host === '[::1]') return true;
  return isIPv4(host) && host.startsWith('127.');
}

/** A host name as an IP literal (`[::1]` -> `::1`), or undefined for a DNS name. */
const ipLiteral = (name: string): string | undefined => {
  const bare = name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
  return isIP(bare) === 0 ? undefined : bare;
};

/** The host name and port of a Host header (`[::1]:7070` -> `[::1]`, `7070`); undefined when malformed. */
export function parseHostHeader(header: string): { name: string; port: string } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header.trim());
  if (!match) return undefined;
  return { name: match[1]!.toLowerCase(), port: match[2] ?? '' };
}

/**
 * The check of the Host header that keeps a re-bound DNS name out (a web page whose name an attacker
 * points at this machine after it loaded): the names a browser may have used to reach the dashboard
 * are loopback names and addresses (`localhost`, `127.x.y.z` as a real IPv4 literal, `[::1]`), the
 * names given in `allowedHosts` (`name` or `name:port`), and, for a dashboard listening beyond
 * loopback, any IP literal (an address cannot be re-bound). Any other name is refused.
 */
export function createHostCheck(
  boundHost: string,
  allowedHosts: readonly string[],
): (header: string | undefined) => boolean {
  const allowed = new Set(allowedHosts.map((entry) => entry.toLowerCase()));
  const beyondLoopback = !isLoopback(boundHost);
  return (header) => {
    const host = parseHostHeader(header ?? '');
    if (host === undefined) return false;
    if (isLoopback(host.name)) return true;
    if (allowed.has(host.name) || allowed.has(`${host.name}:${host.port}`)) return true;
    return beyondLoopback && ipLiteral(host.name) !== undefined;
  };
}

/** The header the page's own script sends with every request that changes something. */
export const PAGE_SECRET_HEADER = 'x-callisto-page';

/**
 * Refuses a request a web page elsewhere could have made: a Host that is not one of the dashboard's
 * names (a DNS name re-bound to this machine), and, for a request that changes something, an Origin
 * other than the dashboard's own.
 */
export function checkOrigin(
  request: IncomingMessage,
  hostAllowed: (header: string | undefined) => boolean,
  scheme: 'http' | 'https',
): void {
  const host = request.headers.host ?? '';
  if (!hostAllowed(host)) {
    throw new HttpError(
      421,
      `this dashboard does not answer to the name "${parseHostHeader(host)?.name ?? host}": open it by a loopback address, or name the host with --allowed-host`,
    );
  }
  const origin = request.headers.origin;
  if (request.method !== 'GET' && request.method !== 'HEAD' && origin !== undefined) {
    if (origin !== `${scheme}://${host}`) throw new HttpError(403, `requests from ${origin} are refused`);
  }
}

/**
 * The page's secret (a random value per process, written into the page it serves): a request that
 * changes something must carry it in `x-callisto-page` (or the dashboard's token), which only the
 * page's own script can read. Compared in constant time.
 */
export function createPageSecret(): { value: string; check(request: IncomingMessage): boolean } {
  const value = randomBytes(24).toString('base64url');
  const expected = digest(value);
  return {
    value,
    check(request) {
      const sent = request.headers[PAGE_SECRET_HEADER];
      return typeof sent === 'string' && timingSafeEqual(digest(sent), expected);
    },
  };
}
