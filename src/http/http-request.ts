/**
 * What one HTTP request to Callisto says, read the same way by the provider's entry and the gateway:
 * `POST /<service>/<method>` (the service name as it is declared, e.g. `example.UserService`), with
 *
 * - `x-callisto-version` and `x-callisto-group` (or the query parameters `version` and `group`);
 * - `x-callisto-timeout-ms`: the caller's deadline, from when the headers arrived (at most 2^31 - 1 ms,
 *   a longer one is clamped: http-timeout.ts);
 * - `x-callisto-attachment-<key>`: one attachment each (keys are lower case, as HTTP headers are);
 * - `Authorization` (the credentials the provider's auth filter reads, docs/security.md) and the W3C
 *   trace context `traceparent`/`tracestate`: attachments of the same names, unless an
 *   `x-callisto-attachment-` header gives them;
 * - a body of `application/json` (or no content type): a JSON array, the arguments in order, in the
 *   json serializer's tagged format (docs/http.md); or of `application/x-protobuf`: the method's
 *   protobuf request message, for a service that declares its messages.
 *
 * Anything else is an `HttpRefusal`, answered with its status and a JSON error.
 */
import type { IncomingMessage } from 'node:http';
import type { Attachments } from '../core/invocation.js';
import type { ErrorCodeName } from '../core/rpc-error.js';
import { parseTimeoutMs } from './http-timeout.js';

export const VERSION_HEADER = 'x-callisto-version';
export const GROUP_HEADER = 'x-callisto-group';
export const TIMEOUT_HEADER = 'x-callisto-timeout-ms';
export const ATTACHMENT_PREFIX = 'x-callisto-attachment-';
/** Standard headers that are attachments of the same name (credentials, trace context). */
export const STANDARD_ATTACHMENT_HEADERS = ['authorization', 'traceparent', 'tracestate'] as const;

/** A request refused before it reached a service: its HTTP status and the RpcError code in the body. */
export class HttpRefusal extends Error {
  override readonly name = 'HttpRefusal';
  constructor(
    readonly status: number,
    readonly code: ErrorCodeName,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export interface HttpCallTarget {
  readonly service: string;
  readonly method: string;
  /** Undefined when the request names none. */
  readonly version: string | undefined;
  readonly group: string;
  /** The caller's timeout, ms; 0 when none. */
  readonly timeoutMs: number;
  readonly attachments: Attachments;
  /** The body's format: JSON, or a protobuf request message (`application/x-protobuf`). */
  readonly format: 'json' | 'protobuf';
}

/** A service or method name in the path: what a declared name may hold (dots, letters, digits, _ $ -). */
const NAME = /^[A-Za-z_$][\w$.-]{0,254}$/;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const PROTOBUF_TYPE = /^application\/(?:x-)?protobuf\s*(?:;|$)/i;

/** Reads the target of a request; throws an HttpRefusal. */
export function readCallTarget(request: IncomingMessage): HttpCallTarget {
  if (request.method !== 'POST') {
    throw new HttpRefusal(405, 'BadRequest', `${request.method} is not accepted: call with POST`, {
      allow: 'POST',
    });
  }
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  const params = query < 0 ? undefined : new URLSearchParams(url.slice(query + 1));
  const parts = path.split('/');
  if (parts.length !== 3 || parts[0] !== '') {
    throw new HttpRefusal(404, 'ServiceNotFound', `no such path ${describe(path)}: POST /<service>/<method>`);
  }
  const service = decodePart(parts[1]!);
  const method = decodePart(parts[2]!);
  if (service === undefined || !NAME.test(service)) {
    throw new HttpRefusal(404, 'ServiceNotFound', `${describe(parts[1]!)} is not a service name`);
  }
  if (method === undefined || !NAME.test(method)) {
    throw new HttpRefusal(404, 'MethodNotFound', `${describe(parts[2]!)} is not a method name`);
  }
  const type = request.headers['content-type'];
  const format = type !== undefined && PROTOBUF_TYPE.test(type) ? 'protobuf' : 'json';
  if (type !== undefined && format === 'json' && !JSON_TYPE.test(type)) {
    throw new HttpRefusal(
      415,
      'BadRequest',
      `content type ${describe(type)} is not accepted: send application/json (or application/x-protobuf)`,
    );
  }
  const headers = request.headers;
  const version = single(headers[VERSION_HEADER]) ?? params?.get('version') ?? undefined;
  const group = single(headers[GROUP_HEADER]) ?? params?.get('group') ?? '';
  const timeoutText = single(headers[TIMEOUT_HEADER]);
  let timeoutMs = 0;
  if (timeoutText !== undefined) {
    const parsed = parseTimeoutMs(timeoutText);
    if (parsed !== undefined) timeoutMs = parsed;
    else {
      throw new HttpRefusal(
        400,
        'BadRequest',
        `${TIMEOUT_HEADER} ${describe(timeoutText)} is not a number of ms`,
      );
    }
  }
  const attachments: Attachments = {};
  for (const name in headers) {
    if (!name.startsWith(ATTACHMENT_PREFIX)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    const key = name.slice(ATTACHMENT_PREFIX.length);
    if (key === '' || key === '__proto__') continue;
    attachments[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  for (const name of STANDARD_ATTACHMENT_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && attachments[name] === undefined) attachments[name] = value;
  }
  return { service, method, version, group, timeoutMs, attachments, format };
}

function decodePart(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A short, quoted rendering of something a client sent, for messages. */
export function describe(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}...` : text);
}
