/**
 * Writes the HTTP answers of the entry and the gateway: a result as JSON (the json serializer's tagged
 * format, so a Date, a bigint or a Map comes back as it left), 204 for a method that returns nothing,
 * and errors as `{"error":{"code","name","message","details"}}` with the status of http-status.ts.
 * Response attachments travel as `x-callisto-attachment-<key>` headers. Every answer goes out through
 * answer.ts, with the security headers of every listener.
 */

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorPayload } from '../core/error-payload.js';
import type { Attachments } from '../core/invocation.js';
import type { ErrorCodeName } from '../core/rpc-error.js';
import type { Serializer } from '../serialization/serializer.js';
import { JSON_CONTENT, sendAnswer } from './answer.js';
import { ATTACHMENT_PREFIX, type HttpRefusal } from './http-request.js';
import { HTTP_STATUS } from './http-status.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Header-safe attachment values only (a value with a line break or a control character is left out). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function setAttachments(response: ServerResponse, attachments: Attachments | undefined): void {
  if (attachments === undefined) return;
  for (const key of Object.keys(attachments)) {
    const value = attachments[key]!;
    const name = `${ATTACHMENT_PREFIX}${key.toLowerCase()}`;
    if (HEADER_NAME.test(name) && typeof value === 'string' && HEADER_VALUE.test(value)) {
      response.setHeader(name, value);
    }
  }
}

/** Sends a result: its JSON, or 204 for `undefined`. */
export function sendResult(
  response: ServerResponse,
  json: Serializer,
  value: unknown,
  attachments: Attachments | undefined,
): void {
  if (response.headersSent || response.destroyed) return;
  setAttachments(response, attachments);
  if (value === undefined) sendAnswer(response, { status: 204, contentType: JSON_CONTENT, body: undefined });
  else sendAnswer(response, { status: 200, contentType: JSON_CONTENT, body: json.encode(value) });
}

export const PROTOBUF_CONTENT = 'application/x-protobuf';

/** Sends a result already encoded (a protobuf response message). */
export function sendEncoded(
  response: ServerResponse,
  contentType: string,
  body: Uint8Array,
  attachments: Attachments | undefined,
): void {
  if (response.headersSent || response.destroyed) return;
  setAttachments(response, attachments);
  sendAnswer(response, { status: 200, contentType, body });
}

/** An error answer: its code and payload (as the provider shaped them), headers and status. */
export interface ErrorAnswer {
  /** The json serializer the body is written in. */
  readonly json: Serializer;
  readonly code: ErrorCodeName;
  readonly payload: ErrorPayload;
  /** Response attachments, as `x-callisto-attachment-<key>` headers. */
  readonly attachments?: Attachments | undefined;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: the code's status (http-status.ts). */
  readonly status?: number;
}

/** Sends an error from a call. */
export function sendError(response: ServerResponse, answer: ErrorAnswer): void {
  if (response.headersSent || response.destroyed) return;
  const { json, code, payload } = answer;
  setAttachments(response, answer.attachments);
  let body: Uint8Array;
  try {
    body = json.encode({ error: { code, ...payload } });
  } catch {
    body = json.encode({ error: { code, name: payload.name, message: payload.message, details: {} } });
  }
  sendAnswer(response, {
    status: answer.status ?? HTTP_STATUS[code],
    contentType: JSON_CONTENT,
    body,
    headers: answer.headers ?? {},
  });
}

/**
 * Answers a request refused before any service saw it. When the body was not read to its end, the
 * connection is closed after the answer (the rest of the body is not wanted).
 */
export function sendRefusal(
  response: ServerResponse,
  json: Serializer,
  refusal: HttpRefusal,
  closeAfter: boolean,
): void {
  if (closeAfter) {
    response.shouldKeepAlive = false;
    response.once('finish', () => response.socket?.destroySoon());
  }
  sendError(response, {
    json,
    code: refusal.code,
    payload: { name: 'RpcError', message: refusal.message, details: {} },
    headers: { ...refusal.headers, ...(closeAfter ? { connection: 'close' } : {}) },
    status: refusal.status,
  });
}

/**
 * Answers on a raw socket what node:http refuses before a request exists (malformed request line, headers
 * too large, headers too slow): the same JSON error, then the connection is closed.
 */
export function sendSocketError(socket: Socket, status: number, code: ErrorCodeName, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = Buffer.from(JSON.stringify({ error: { code, name: 'RpcError', message, details: {} } }));
  const reason = STATUS_TEXT[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n${SOCKET_HEADERS}content-type: ${JSON_CONTENT}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
  );
  socket.destroySoon?.();
}

const SOCKET_HEADERS = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};
