/**
 * OpenTelemetry through `@opentelemetry/api` only: the tracer of the registered SDK, if any, W3C trace
 * context in a call's attachments (`traceparent`, `tracestate`), and the RPC semantic conventions'
 * attribute names. With no SDK registered, `activeTracer()` is a few property reads and nothing else is
 * done: no span, no attachment.
 */
import {
  type Context,
  createTraceState,
  ProxyTracerProvider,
  type Span,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { parseTraceparent, TRACEPARENT, TRACESTATE } from './trace-context.js';

export const TRACER_NAME = 'callisto';
/** `rpc.system` of Callisto's spans. */
export const RPC_SYSTEM = 'callisto';

/** The attachment keys of W3C trace context (observability/trace-context.ts). */
export { TRACEPARENT, TRACESTATE };

let cachedProvider: TracerProvider | undefined;
let cachedTracer: Tracer | undefined;

/** The tracer of the registered SDK, or undefined when none is registered (then nothing is traced). */
export function activeTracer(): Tracer | undefined {
  const provider = trace.getTracerProvider();
  if (provider !== cachedProvider) {
    cachedProvider = provider;
    cachedTracer = undefined;
  }
  if (cachedTracer !== undefined) return cachedTracer;
  if (provider instanceof ProxyTracerProvider) {
    cachedTracer = provider.getDelegateTracer(TRACER_NAME);
    return cachedTracer;
  }
  cachedTracer = provider.getTracer(TRACER_NAME);
  return cachedTracer;
}

/** The `traceparent` of `span` (version 00). */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * `base` with the remote parent the attachments carry (a valid `traceparent`), or `base` itself. A
 * malformed header is ignored (a new trace starts), as W3C trace context requires.
 */
export function extractParent(attachments: Readonly<Record<string, string>>, base: Context): Context {
  const parent = parseTraceparent(attachments[TRACEPARENT]);
  if (parent === undefined) return base;
  const state = attachments[TRACESTATE];
  return trace.setSpanContext(base, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: Number.parseInt(parent.flags, 16) & 1,
    isRemote: true,
    ...(state !== undefined && state.length <= 512 ? { traceState: createTraceState(state) } : {}),
  });
}

/** Ends `span`, with the error's code and status when the call failed. */
export function endSpan(span: Span, error: unknown, code: string | undefined): void {
  if (error !== undefined && span.isRecording()) {
    span.setAttribute('error.type', code ?? 'Internal');
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message ?? String(error) });
  }
  span.end();
}

/**
 * A stream's span attributes at its end (one span per stream, not per message): its kind and the
 * messages each way, as this side counted them.
 */
export function streamAttributes(stream: {
  readonly kind: string;
  readonly messagesIn: number;
  readonly messagesOut: number;
}): Record<string, string | number> {
  return {
    'callisto.stream.kind': stream.kind,
    'callisto.stream.messages_received': stream.messagesIn,
    'callisto.stream.messages_sent': stream.messagesOut,
  };
}

/** `host:port` into the semantic conventions' address and port attributes. */
export function addressAttributes(
  prefix: 'server' | 'network.peer',
  address: string | undefined,
): Record<string, string | number> {
  if (address === undefined || address === '') return {};
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return { [`${prefix}.address`]: address };
  const port = Number(address.slice(colon + 1));
  return Number.isInteger(port)
    ? { [`${prefix}.address`]: address.slice(0, colon).replace(/^\[|\]$/g, ''), [`${prefix}.port`]: port }
    : { [`${prefix}.address`]: address };
}
