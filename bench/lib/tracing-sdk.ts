/**
 * Registers the OpenTelemetry SDK in a bench process: an AsyncLocalStorage context manager, a
 * parent-based sampler keeping `ratio` of the traces, and an exporter that drops what it is given (the
 * cost measured is Callisto's and the SDK's, not an exporter's network).
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';

const dropping: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
};

export function registerTracingSdk(ratio: number): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
      spanProcessors: [new SimpleSpanProcessor(dropping)],
    }),
  );
}
