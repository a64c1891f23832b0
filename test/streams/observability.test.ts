/**
 * Streams in the observability of both sides, over real TCP sockets: the per-method stream metrics in
 * Prometheus (opened, open now, ended by code, messages each way while the stream is still open,
 * durations) and in `/stats`; one tracing span per stream on each side, ending with the stream, with its
 * message counts; one access log line at the stream's end with its messages each way; and the stream
 * hook shape filters use (`invocation.stream.onMessage` from `start`, the counts in `end`).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type AppOptions, type CallistoApp, defineFilter, type Logger } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { parsePrometheus, sampleValue } from '../support/prometheus-text.js';
import { waitFor } from '../support/wait-for.js';
import { type Probe, streaming, streamingImpl } from './fixture.js';

afterEach(async () => {
  await closeAll();
  trace.disable();
  context.disable();
});

const newProbe = (): Probe => ({ produced: 0, finallyRan: 0, aborted: 0 });

async function start(providerOptions: AppOptions = {}, consumerOptions: AppOptions = {}) {
  const provider = await testApp({
    application: 'stream-provider',
    server: { port: 0 },
    admin: { enabled: true, port: 0 },
    ...providerOptions,
  });
  provider.provide(streaming, streamingImpl(newProbe()));
  await provider.start();
  const consumer = await testApp({ application: 'stream-consumer', ...consumerOptions });
  await consumer.start();
  const ref = consumer.refer(streaming, { url: provider.address!, retries: 0 });
  return { provider, consumer, ref };
}

async function* numbers(count: number): AsyncIterable<number> {
  for (let n = 0; n < count; n++) yield n;
}

async function scrape(app: CallistoApp) {
  return parsePrometheus(await app.metrics());
}

const of = (side: 'provider' | 'consumer', method: string, more: Record<string, string> = {}) => ({
  side,
  service: 'test.Streaming',
  method,
  ...more,
});

describe('stream metrics', () => {
  it('count streams opened, open, ended by code, messages each way (live) and durations, on both sides', async () => {
    const { provider, consumer, ref } = await start();
    // an open stream: the gauges and the message counts move before it ends
    let read = 0;
    const iteration = ref.slow(5)[Symbol.asyncIterator]();
    while (read < 3) {
      await iteration.next();
      read++;
    }
    const live = await scrape(provider);
    expect(sampleValue(live, 'callisto_streams_open', of('provider', 'slow'))).toBe(1);
    expect(sampleValue(live, 'callisto_streams_opened_total', of('provider', 'slow'))).toBe(1);
    expect(
      sampleValue(live, 'callisto_stream_messages_total', of('provider', 'slow', { direction: 'out' })),
    ).toBeGreaterThanOrEqual(3);
    const liveConsumer = await scrape(consumer);
    expect(sampleValue(liveConsumer, 'callisto_streams_open', of('consumer', 'slow'))).toBe(1);
    expect(
      sampleValue(
        liveConsumer,
        'callisto_stream_messages_total',
        of('consumer', 'slow', { direction: 'in' }),
      ),
    ).toBe(3);
    await iteration.return!();

    // a clean server stream and a client stream
    let counted = 0;
    for await (const _ of ref.count(7, -1)) counted++;
    expect(counted).toBe(7);
    expect(await ref.sum('s', numbers(4))).toMatchObject({ total: 6, count: 4 });

    await waitFor(
      async () => sampleValue(await scrape(provider), 'callisto_streams_open', of('provider', 'slow')) === 0,
    );
    const after = await scrape(provider);
    expect(
      sampleValue(after, 'callisto_streams_ended_total', of('provider', 'slow', { code: 'Cancelled' })),
    ).toBe(1);
    expect(sampleValue(after, 'callisto_streams_ended_total', of('provider', 'count', { code: 'OK' }))).toBe(
      1,
    );
    expect(
      sampleValue(after, 'callisto_stream_messages_total', of('provider', 'count', { direction: 'out' })),
    ).toBe(7);
    expect(
      sampleValue(after, 'callisto_stream_messages_total', of('provider', 'count', { direction: 'in' })),
    ).toBe(0);
    expect(
      sampleValue(after, 'callisto_stream_messages_total', of('provider', 'sum', { direction: 'in' })),
    ).toBe(4);
    expect(sampleValue(after, 'callisto_stream_duration_seconds_count', of('provider', 'count'))).toBe(1);
    expect(sampleValue(after, 'callisto_stream_duration_seconds_count', of('provider', 'slow'))).toBe(1);
    // stream durations have buckets of their own, up to hours
    expect(
      sampleValue(after, 'callisto_stream_duration_seconds_bucket', of('provider', 'slow', { le: '3600' })),
    ).toBe(1);
    expect(
      sampleValue(after, 'callisto_call_duration_seconds_bucket', of('provider', 'slow', { le: '10' })),
    ).toBe(1);
    // a unary method has no stream series
    await ref.ping();
    expect(sampleValue(await scrape(provider), 'callisto_streams_opened_total', of('provider', 'ping'))).toBe(
      undefined,
    );

    const consumerAfter = await scrape(consumer);
    expect(
      sampleValue(consumerAfter, 'callisto_streams_ended_total', of('consumer', 'count', { code: 'OK' })),
    ).toBe(1);
    expect(
      sampleValue(
        consumerAfter,
        'callisto_streams_ended_total',
        of('consumer', 'slow', { code: 'Cancelled' }),
      ),
    ).toBe(1);
    expect(
      sampleValue(
        consumerAfter,
        'callisto_stream_messages_total',
        of('consumer', 'count', { direction: 'in' }),
      ),
    ).toBe(7);
    expect(
      sampleValue(
        consumerAfter,
        'callisto_stream_messages_total',
        of('consumer', 'sum', { direction: 'out' }),
      ),
    ).toBe(4);

    // the same figures in /stats
    const stats = (await (await fetch(`http://127.0.0.1:${provider.adminPort}/stats`)).json()) as {
      methods: Array<{ side: string; method: string; streams?: Record<string, unknown> }>;
    };
    const count = stats.methods.find((m) => m.side === 'provider' && m.method === 'count')!;
    expect(count.streams).toMatchObject({
      opened: 1,
      open: 0,
      byCode: { OK: 1 },
      messages: { in: 0, out: 7 },
    });
    const slow = stats.methods.find((m) => m.side === 'provider' && m.method === 'slow')!;
    expect(slow.streams).toMatchObject({ opened: 1, open: 0, byCode: { Cancelled: 1 } });
    expect((slow.streams!.durationMs as { mean: number }).mean).toBeGreaterThan(5);
    expect(stats.methods.find((m) => m.method === 'ping')!.streams).toBeUndefined();
  });
});

describe('stream tracing', () => {
  it('is one span per stream on each side, ended with the stream, with its message counts', async () => {
    const exporter = new InMemorySpanExporter();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
    const { ref } = await start();
    // no span ends while a stream is still going
    const open = ref.slow(2)[Symbol.asyncIterator]();
    for (let n = 0; n < 5; n++) await open.next();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    await open.return!();
    await waitFor(() => exporter.getFinishedSpans().length === 2);
    const [slowClient] = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(slowClient!.attributes['callisto.stream.messages_received']).toBeGreaterThanOrEqual(5);
    expect(slowClient!.status.code).toBe(2); // ERROR: Cancelled
    exporter.reset();

    let seen = 0;
    for await (const _ of ref.count(25, -1)) seen++;
    expect(seen).toBe(25);
    expect(await ref.sum('s', numbers(6))).toMatchObject({ count: 6 });
    await waitFor(() => exporter.getFinishedSpans().length >= 4);
    const spans = exporter.getFinishedSpans();
    const named = (name: string, kind: SpanKind) => spans.filter((s) => s.name === name && s.kind === kind);
    const [client] = named('test.Streaming/count', SpanKind.CLIENT);
    const [server] = named('test.Streaming/count', SpanKind.SERVER);
    expect(named('test.Streaming/count', SpanKind.CLIENT)).toHaveLength(1);
    expect(named('test.Streaming/count', SpanKind.SERVER)).toHaveLength(1);
    expect(server!.parentSpanContext?.spanId).toBe(client!.spanContext().spanId);
    expect(server!.attributes).toMatchObject({
      'callisto.stream.kind': 'server',
      'callisto.stream.messages_sent': 25,
      'callisto.stream.messages_received': 0,
    });
    expect(client!.attributes).toMatchObject({
      'callisto.stream.kind': 'server',
      'callisto.stream.messages_received': 25,
      'callisto.stream.messages_sent': 0,
    });
    const [sumServer] = named('test.Streaming/sum', SpanKind.SERVER);
    expect(sumServer!.attributes).toMatchObject({ 'callisto.stream.messages_received': 6 });
    const [sumClient] = named('test.Streaming/sum', SpanKind.CLIENT);
    expect(sumClient!.attributes).toMatchObject({ 'callisto.stream.messages_sent': 6 });
  });
});

describe('stream access log', () => {
  it('writes one line at the stream end, with its kind, messages each way and duration', async () => {
    const lines: string[] = [];
    const keep = (message: string) => lines.push(message);
    const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
    const { ref } = await start({ server: { port: 0, accessLog: ['test.Streaming'] }, logger });
    // nothing is written while the stream is open; its line comes at its end
    const open = ref.slow(2)[Symbol.asyncIterator]();
    for (let n = 0; n < 3; n++) await open.next();
    expect(lines.filter((line) => line.startsWith('access '))).toEqual([]);
    await open.return!();
    let counted = 0;
    for await (const _ of ref.count(9, -1)) counted++;
    expect(counted).toBe(9);
    expect(await ref.sum('s', numbers(3))).toMatchObject({ count: 3 });
    const access = await waitFor(() => {
      const found = lines.filter((line) => line.startsWith('access '));
      return found.length >= 3 ? found : undefined;
    });
    expect(access[0]).toMatch(
      /^access test\.Streaming\.slow caller=- from=127\.0\.0\.1:\d+ outcome=Cancelled \d+\.\d\dms stream=server in=0 out=\d+$/,
    );
    expect(Number(/ (\d+\.\d\d)ms/.exec(access[0]!)![1])).toBeGreaterThan(4);
    expect(access[1]).toMatch(
      /^access test\.Streaming\.count caller=- from=127\.0\.0\.1:\d+ outcome=OK \d+\.\d\dms stream=server in=0 out=9$/,
    );
    expect(access[2]).toMatch(/^access test\.Streaming\.sum .* outcome=OK .* stream=client in=3 out=0$/);
  });
});

describe('stream hooks', () => {
  it("a filter's start registers onMessage for each message; its end reads the stream's counts", async () => {
    const seen: string[] = [];
    const ends: string[] = [];
    const watch = (side: string) => ({
      start(invocation: { stream?: { onMessage(l: (d: string, m: unknown) => void): void } }) {
        invocation.stream?.onMessage((direction, message) => {
          seen.push(`${side} ${direction} ${JSON.stringify(message)}`);
          throw new Error('a listener that throws changes nothing');
        });
      },
      end(invocation: { stream?: { messagesIn: number; messagesOut: number } }, error: unknown) {
        const s = invocation.stream;
        if (s !== undefined)
          ends.push(`${side} in=${s.messagesIn} out=${s.messagesOut} ${error === undefined}`);
      },
    });
    const { ref } = await start(
      {
        filters: { provider: [defineFilter({ name: 'watch', position: 'provider', ...watch('provider') })] },
      },
      { filters: { consumer: [defineFilter({ name: 'watch', position: 'call', ...watch('consumer') })] } },
    );
    async function* ticks() {
      yield { n: 1 };
      yield { n: 2 };
    }
    const echoed: number[] = [];
    for await (const tick of ref.echo(ticks())) echoed.push(tick.n);
    expect(echoed).toEqual([2, 4]);
    await waitFor(() => ends.length === 2);
    expect(seen.filter((line) => line.startsWith('provider'))).toEqual([
      'provider in {"n":1}',
      'provider out {"n":2}',
      'provider in {"n":2}',
      'provider out {"n":4}',
    ]);
    expect(seen.filter((line) => line.startsWith('consumer out'))).toEqual([
      'consumer out {"n":1}',
      'consumer out {"n":2}',
    ]);
    expect(seen.filter((line) => line.startsWith('consumer in'))).toEqual([
      'consumer in {"n":2}',
      'consumer in {"n":4}',
    ]);
    expect(ends.sort()).toEqual(['consumer in=2 out=2 true', 'provider in=2 out=2 true']);
  });
});

describe('stream counts on every entry', () => {
  it('the in-process (injvm) and HTTP entries count a stream as the wire does', async () => {
    const lines: string[] = [];
    const keep = (message: string) => lines.push(message);
    const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
    const app = await testApp({
      application: 'both-sides',
      server: { port: 0, http: { port: 0 }, accessLog: ['test.Streaming'] },
      logger,
    } as AppOptions);
    app.provide(streaming, streamingImpl(newProbe()));
    await app.start();
    // in-process: the same app refers to what it provides
    const local = app.refer(streaming, { retries: 0 });
    let counted = 0;
    for await (const _ of local.count(6, -1)) counted++;
    expect(counted).toBe(6);
    expect(await local.sum('s', numbers(5))).toMatchObject({ count: 5 });
    // HTTP: Server-Sent Events
    const response = await fetch(`http://127.0.0.1:${app.httpPort}/test.Streaming/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify([4, -1]),
    });
    expect(response.status).toBe(200);
    await response.text();
    const access = await waitFor(() => {
      const found = lines.filter((line) => line.startsWith('access '));
      return found.length >= 3 ? found : undefined;
    });
    expect(access[0]).toMatch(
      /^access test\.Streaming\.count .* from=injvm outcome=OK .* stream=server in=0 out=6$/,
    );
    expect(access[1]).toMatch(
      /^access test\.Streaming\.sum .* from=injvm outcome=OK .* stream=client in=5 out=0$/,
    );
    expect(access[2]).toMatch(
      /^access test\.Streaming\.count .* from=127\.0\.0\.1:\d+ outcome=OK .* stream=server in=0 out=4$/,
    );
    const metrics = parsePrometheus(await app.metrics());
    expect(
      sampleValue(metrics, 'callisto_stream_messages_total', of('provider', 'count', { direction: 'out' })),
    ).toBe(10);
    expect(
      sampleValue(metrics, 'callisto_stream_messages_total', of('consumer', 'count', { direction: 'in' })),
    ).toBe(6);
    expect(
      sampleValue(metrics, 'callisto_stream_messages_total', of('consumer', 'sum', { direction: 'out' })),
    ).toBe(5);
  });
});
