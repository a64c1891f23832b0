/**
 * `tracing-client` (consumer, per call): a CLIENT span per call (retries and failovers inside it),
 * child of the active context, named `service/method` with the RPC semantic conventions' attributes;
 * its W3C trace context goes to the provider in the call's attachments (`traceparent`, `tracestate`).
 * Nothing is done while no OpenTelemetry SDK is registered.
 */

import { context, SpanKind } from '@opentelemetry/api';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import {
  activeTracer,
  addressAttributes,
  endSpan,
  RPC_SYSTEM,
  streamAttributes,
  TRACEPARENT,
  TRACESTATE,
  traceparentOf,
} from '../observability/tracing.js';

/** Where a tracing filter keeps its span. */
export interface TracedInvocation extends Invocation {
  tracingSpan: unknown;
}

type Span = import('@opentelemetry/api').Span;

const CLIENT = { kind: SpanKind.CLIENT };

export function tracingClientFilter(): NamedFilter<TracedInvocation> {
  return defineFilter<TracedInvocation>({
    name: 'tracing-client',
    position: 'call',
    order: FILTER_ORDER.call['tracing-client'],
    start(invocation) {
      const tracer = activeTracer();
      if (tracer === undefined) return;
      const service = invocation.service.name;
      const span = tracer.startSpan(`${service}/${invocation.method}`, CLIENT, context.active());
      // an unsampled span gets no attributes: most calls of a sampled-down service cost less
      if (span.isRecording()) {
        span.setAttributes({
          'rpc.system': RPC_SYSTEM,
          'rpc.service': service,
          'rpc.method': invocation.method,
          'callisto.service.version': invocation.service.version,
        });
      }
      invocation.tracingSpan = span;
      const state = span.spanContext().traceState?.serialize();
      invocation.attachments = {
        ...invocation.attachments,
        [TRACEPARENT]: traceparentOf(span),
        ...(state ? { [TRACESTATE]: state } : {}),
      };
    },
    end(call, error) {
      const span = call.tracingSpan as Span | undefined;
      if (span === undefined) return;
      call.tracingSpan = undefined;
      if (span.isRecording()) {
        span.setAttributes(addressAttributes('server', call.remoteAddress));
        if (call.stream !== undefined) span.setAttributes(streamAttributes(call.stream));
      }
      endSpan(span, error, error === undefined ? undefined : RpcError.from(error).code);
    },
  });
}
