/**
 * Writes one whole answer, the same way on every HTTP listener: its status, content type and length,
 * the security headers (security-headers.ts), and its body (none for HEAD). The RPC answers of the entry
 * and the gateway (http-answer.ts), the admin port's JSON and pages, and the dashboard's API all end
 * here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './security-headers.js';

export const JSON_CONTENT = 'application/json; charset=utf-8';

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  /** Undefined: no body (a 204). */
  readonly body: string | Uint8Array | undefined;
  /** More headers (they may replace security headers, e.g. a page's own content security policy). */
  readonly headers?: Readonly<Record<string, string | number>> | undefined;
  /** The request it answers: for HEAD, the headers only. */
  readonly request?: IncomingMessage | undefined;
}

/** Sends `answer` unless an answer was already sent (or the connection is gone). */
export function sendAnswer(response: ServerResponse, answer: Answer): void {
  if (response.headersSent || response.destroyed) return;
  const { body } = answer;
  const length = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  response.writeHead(answer.status, {
    ...SECURITY_HEADERS,
    ...answer.headers,
    ...(body === undefined ? {} : { 'content-type': answer.contentType, 'content-length': length }),
  });
  response.end(answer.request?.method === 'HEAD' ? undefined : body);
}

export interface JsonAnswerOptions {
  /** Indented, with a final line break (for people reading it). Default compact. */
  readonly pretty?: boolean;
  /** Rewrites the text before it is sent (secrets in addresses). */
  readonly scrub?: ((text: string) => string) | undefined;
  readonly headers?: Readonly<Record<string, string>>;
  readonly request?: IncomingMessage | undefined;
}

/** Sends `value` as plain JSON (`JSON.stringify`). */
export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  options: JsonAnswerOptions = {},
): void {
  const text = options.pretty ? `${JSON.stringify(value, null, 2)}\n` : JSON.stringify(value);
  sendAnswer(response, {
    status,
    contentType: JSON_CONTENT,
    body: options.scrub === undefined ? text : options.scrub(text),
    headers: options.headers,
    request: options.request,
  });
}
