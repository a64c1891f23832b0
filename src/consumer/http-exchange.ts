/**
 * One call as HTTP carries it to the provider's entry (docs/http.md) and back, for http-connection.ts:
 * the request's headers made from a call (version, group, deadline, call id, attachments, credentials),
 * and the answer made into what a framed answer would be (a value, or the RpcError of the body's
 * `{"error":{code,name,message,details}}`).
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { fromErrorPayload } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import { ErrorCode, type ErrorCodeName, messageOf, RpcError } from '../core/rpc-error.js';
import {
  ATTACHMENT_PREFIX,
  GROUP_HEADER,
  STANDARD_ATTACHMENT_HEADERS,
  TIMEOUT_HEADER,
  VERSION_HEADER,
} from '../http/http-request.js';
import { MAX_TIMEOUT_MS } from '../http/http-timeout.js';
import { CALL_ID_ATTACHMENT } from '../observability/call-id.js';
import { decodeRoute, NO_ATTACHMENTS } from '../protocol/metadata.js';
import { decodeBody, measureBody } from '../serialization/decode-limits.js';
import type { Serializer } from '../serialization/serializer.js';
import type { WireCall, WireRoute } from './pending-call.js';

/** Header-safe values only (no line breaks or control characters). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const STANDARD = new Set<string>(STANDARD_ATTACHMENT_HEADERS);

type RouteNames = ReturnType<typeof decodeRoute>;
const routeNames = new WeakMap<WireRoute, RouteNames>();

/** Service, version, group and method of a route (a MethodRoute has them; any other is decoded once). */
export function namesOf(route: WireRoute): RouteNames {
  const own = route as Partial<{
    service: { name: string; version: string; group: string };
    method: string;
  }>;
  if (own.service !== undefined && typeof own.method === 'string') {
    const { name, version, group } = own.service;
    return { service: name, version, group, method: own.method };
  }
  let names = routeNames.get(route);
  if (names === undefined) {
    names = decodeRoute(route.prefix);
    routeNames.set(route, names);
  }
  return names;
}

/**
 * The request headers of a call: attachments as `x-callisto-attachment-<key>` (lower-cased), except
 * `authorization`, `traceparent` and `tracestate`, which are those headers; values that cannot be
 * header values are left out.
 */
export function requestHeaders(call: WireCall, bodyLength: number): OutgoingHttpHeaders {
  const { version, group } = namesOf(call.route);
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': bodyLength,
    [VERSION_HEADER]: version,
  };
  if (group !== '') headers[GROUP_HEADER] = group;
  const timeoutMs = call.attempt.timeoutMs;
  if (timeoutMs > 0) headers[TIMEOUT_HEADER] = String(Math.min(Math.ceil(timeoutMs), MAX_TIMEOUT_MS));
  if (call.callId !== undefined) headers[CALL_ID_ATTACHMENT] = call.callId;
  const attachments = call.attachments;
  if (attachments !== undefined) {
    for (const key of Object.keys(attachments)) {
      const value = attachments[key];
      if (typeof value !== 'string' || !HEADER_VALUE.test(value)) continue;
      const lower = key.toLowerCase();
      const name = STANDARD.has(lower) ? lower : `${ATTACHMENT_PREFIX}${lower}`;
      if (HEADER_NAME.test(name)) headers[name] = value;
    }
  }
  return headers;
}

/** An answer whose body arrived (within the limit). */
export interface HttpAnswer {
  readonly call: WireCall;
  readonly response: IncomingMessage;
  readonly body: Buffer;
  readonly json: Serializer;
  readonly maxDecodedElements: number;
  /** The provider's address, for messages. */
  readonly address: string;
  /** A result that could not be decoded (over a limit, malformed): logged by the pool. */
  readonly refused: (reason: string) => void;
}

export type HttpOutcome = { readonly value: unknown } | { readonly error: RpcError };

/** What an answer says: its value, or its error as a framed answer would carry it. */
export function answerOf(answer: HttpAnswer): HttpOutcome {
  const { call, response, body, json, address } = answer;
  const status = response.statusCode ?? 0;
  call.attempt.responseAttachments = attachmentsOf(response);
  if (status === 204) return { value: undefined };
  const ok = status >= 200 && status < 300;
  const limits = { maxElements: answer.maxDecodedElements };
  let decoded: unknown;
  try {
    measureBody(json, body, limits);
    decoded = body.length === 0 ? undefined : decodeBody(json, body, limits);
  } catch (error) {
    if (ok) {
      const message = `cannot decode the response of ${call.route.label} from ${address}: ${messageOf(error)}`;
      answer.refused(`refused an answer from ${address}: ${message}`);
      return { error: new RpcError('Serialization', message, { cause: error }) };
    }
    decoded = undefined;
  }
  if (ok) return { value: decoded };
  const error = (decoded as { error?: { code?: unknown } } | undefined)?.error;
  if (typeof error === 'object' && error !== null && typeof error.code === 'string') {
    const code = error.code;
    if (Object.hasOwn(ErrorCode, code))
      return { error: fromErrorPayload(ErrorCode[code as ErrorCodeName], error) };
  }
  const text = `${status} ${response.statusMessage ?? ''}`.trimEnd();
  return {
    error: new RpcError(
      codeOfStatus(status),
      `${call.route.label}: ${address} answered HTTP ${text} without a Callisto error`,
      // not remote: who answered is unknown (a proxy?), so it proves nothing about the call
      { remote: false },
    ),
  };
}

/** The codes of HTTP statuses answered without a Callisto error body (a proxy in between, say). */
function codeOfStatus(status: number): ErrorCodeName {
  if (status === 401 || status === 403) return 'Unauthorized';
  if (status === 404) return 'ServiceNotFound';
  if (status === 408 || status === 504) return 'Timeout';
  if (status === 429) return 'RateLimited';
  if (status === 502) return 'Network';
  if (status === 503) return 'Overloaded';
  if (status >= 400 && status < 500) return 'BadRequest';
  return 'Internal';
}

/** The `x-callisto-attachment-*` headers of an answer. */
function attachmentsOf(response: IncomingMessage): Attachments {
  let attachments: Attachments | undefined;
  for (const name in response.headers) {
    if (!name.startsWith(ATTACHMENT_PREFIX)) continue;
    const value = response.headers[name];
    const key = name.slice(ATTACHMENT_PREFIX.length);
    if (value === undefined || key === '' || key === '__proto__') continue;
    attachments ??= Object.create(null) as Attachments;
    attachments[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return attachments ?? NO_ATTACHMENTS;
}
