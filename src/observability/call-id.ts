/**
 * Call ids: one short id per call, the same on the consumer and the provider, so that the log lines
 * both sides write about one call (the access log, retries, failures) can be joined without a tracing
 * SDK. The consumer makes the id (a random per-process prefix and a counter, in base 36: no crypto and
 * no allocation beyond the string per call) and keeps it for every attempt of the call; the wire carries
 * it as the `callisto-call-id` attachment; the provider takes it when it is well-formed, and otherwise
 * (an older consumer, a hostile one, an HTTP caller without the header) makes its own.
 */
import { randomBytes } from 'node:crypto';

/** The attachment (and HTTP header) a call id travels in. */
export const CALL_ID_ATTACHMENT = 'callisto-call-id';

/** The longest call id a provider accepts from a caller. */
export const MAX_CALL_ID_LENGTH = 64;

const SAFE = /^[A-Za-z0-9._:-]+$/;
const prefix = `${randomBytes(6).readUIntBE(0, 6).toString(36).padStart(10, '0')}-`;
let counter = 0;

/** A new call id, unique to this process (`<10 random base-36 chars>-<counter in base 36>`). */
export function newCallId(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return prefix + counter.toString(36);
}

/** `id` when it is a usable call id: 1 to 64 characters of letters, digits, `.`, `_`, `:` and `-`. */
export function validCallId(id: unknown): string | undefined {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_CALL_ID_LENGTH && SAFE.test(id)
    ? id
    : undefined;
}

/** The caller's call id from its attachments when well-formed, else a new one. */
export function callIdFrom(attachments: Readonly<Record<string, string>> | undefined): string {
  return validCallId(attachments?.[CALL_ID_ATTACHMENT]) ?? newCallId();
}
