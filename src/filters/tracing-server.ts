/**
 * `tracing-server` (provider): a SERVER span per execution, child of the caller's span (the W3C
 * trace context in the call's attachments), named `service/method` with the RPC semantic conventions'
 * attributes; the rest of the chain and the method run with it as the active context, so calls the
 * method makes (and spans it starts) are its children. Nothing is done, and no promise is made, while
 * no OpenTelemetry SDK is registered.
 */

import { context, SpanKind, trace } from '@opentelemetry/api';
import { defineFilter, type NamedFilter, type Step } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import {
  activeTracer,
  addressAttributes,
  endSpan,
  extractParent,
  RPC_SYSTEM,
  streamAttributes,
} from '../observability/tracing.js';

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

const SERVER = { kind: SpanKind.SERVER };

const codeOf = (error: unknown): string => (RpcError.is(error) ? error.code : 'ProviderError');

function tracingStep<I extends Invocation>(next: Step<I>): Step<I> {
  return (invocation) => {
    const tracer = activeTracer();
    if (tracer === undefined) return next(invocation);
    const parent = extractParent(invocation.attachments, context.active());
    const service = invocation.service.name;
    const span = tracer.startSpan(`${service}/${invocation.method}`, SERVER, parent);
    // an unsampled span gets no attributes: most calls of a sampled-down service cost less
    if (span.isRecording()) {
      span.setAttributes({
        'rpc.system': RPC_SYSTEM,
        'rpc.service': service,
        'rpc.method': invocation.method,
        'callisto.service.version': invocation.service.version,
        ...addressAttributes('network.peer', invocation.remoteAddress),
      });
    }
    const active = trace.setSpan(parent, span);
    const end = (error: unknown, code: string | undefined): void => {
      const stream = invocation.stream;
      if (stream !== undefined && span.isRecording()) span.setAttributes(streamAttributes(stream));
      endSpan(span, error, code);
    };
    let result: unknown;
    try {
      result = context.with(active, next, undefined, invocation);
    } catch (error) {
      end(error, codeOf(error));
      throw error;
    }
    if (!isThenable(result)) {
      end(undefined, undefined);
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        end(undefined, undefined);
        return value;
      },
      (error: unknown) => {
        end(error, codeOf(error));
        throw error;
      },
    );
  };
}

/** The provider's tracing filter (a step of Callisto's: no promise for a synchronous method). */
export const tracingServerFilter: NamedFilter = defineFilter({
  name: 'tracing-server',
  position: 'provider',
  order: FILTER_ORDER.provider['tracing-server'],
  step: tracingStep,
});
