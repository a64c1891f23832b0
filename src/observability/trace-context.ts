/**
 * W3C trace context without an OpenTelemetry SDK (docs/cluster.md, "Context across hops"): every call
 * belongs to a trace whose id is in the log lines about it, on every process it crosses.
 *
 * A call that starts a trace sends nothing extra: its trace id is derived from its call id (which every
 * call already carries, observability/call-id.ts), the same way on both sides, so the consumer's lines
 * and the provider's name the same trace at no cost per call. A call made while a provider method runs
 * sends a real `traceparent` (the served call's trace id, a new span id), so the trace goes on from hop
 * to hop. With an SDK registered, its spans' `traceparent` (the `tracing-client` filter) takes over.
 */
import { createHash, randomFillSync } from 'node:crypto';

/** The attachment keys of W3C trace context. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

const FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = '00000000000000000000000000000000';
const INVALID_SPAN = '0000000000000000';
/** A Callisto call id: 10 base-36 characters of a per-process random prefix, `-`, a base-36 counter. */
const CALLISTO_CALL_ID = /^([0-9a-z]{10})-([0-9a-z]{1,11})$/;

export interface TraceParent {
  readonly traceId: string;
  readonly spanId: string;
  /** The trace flags, two hex digits (`01`: sampled). */
  readonly flags: string;
}

/** The parts of a valid version-00 `traceparent`, or undefined (a malformed one is ignored, as W3C asks). */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  if (header === undefined || header.length !== 55) return undefined;
  const match = FORMAT.exec(header);
  if (match === null || match[1] === INVALID_TRACE || match[2] === INVALID_SPAN) return undefined;
  return { traceId: match[1]!, spanId: match[2]!, flags: match[3]! };
}

const hex16 = (value: number): string => value.toString(16).padStart(16, '0');

/**
 * The trace id of a call that came with no `traceparent`, from its call id: for Callisto's own ids the
 * prefix and the counter side by side in hex (unique per call, never all zeros), for any other id
 * (1–64 safe characters, from another client) the MD5 of it. Valid W3C trace ids either way.
 */
export function traceIdOfCallId(callId: string): string {
  const own = CALLISTO_CALL_ID.exec(callId);
  if (own !== null) {
    const counter = Number.parseInt(own[2]!, 36);
    if (counter > 0 && counter <= Number.MAX_SAFE_INTEGER) {
      return hex16(Number.parseInt(own[1]!, 36)) + hex16(counter);
    }
  }
  const digest = createHash('md5').update(callId).digest('hex');
  return digest === INVALID_TRACE ? `${digest.slice(0, 31)}1` : digest;
}

/** The trace id of a call: its `traceparent`'s, else the one derived from its call id. */
export function traceIdOfCall(
  attachments: Readonly<Record<string, string>> | undefined,
  callId: string | undefined,
): string | undefined {
  const parent = parseTraceparent(attachments?.[TRACEPARENT]);
  if (parent !== undefined) return parent.traceId;
  return callId === undefined || callId === '' ? undefined : traceIdOfCallId(callId);
}

const pool = Buffer.alloc(8 * 256);
let offset = pool.length;

/** A new random span id (16 hex digits, never all zeros), from a pool refilled 256 ids at a time. */
export function newSpanId(): string {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + 8);
  offset += 8;
  return id === INVALID_SPAN ? '0000000000000001' : id;
}

/** The `traceparent` of a call made inside the served call's trace: its trace id, a new span. */
export function childTraceparent(traceId: string, flags: string): string {
  return `00-${traceId}-${newSpanId()}-${flags}`;
}
