/**
 * Tracing end to end with the OpenTelemetry SDK's in-memory exporter, over real sockets: one trace
 * spans the consumer's CLIENT span → the provider's SERVER span → the CLIENT span of a nested call the
 * method makes after an await → the second provider's SERVER span; the W3C trace context travels in the
 * call's attachments; attributes follow the RPC semantic conventions; failures set the status. With no
 * SDK registered, nothing is traced and no attachment is added.
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { type CallistoApp, callContext, defineService, type Remote } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

interface Inventory {
  stock(item: string): Promise<{ count: number; traceparent: string | undefined }>;
}
interface Orders {
  place(item: string): Promise<{ count: number; traceparent: string | undefined }>;
}
const InventoryDef = defineService<Inventory>('test.Inventory', { methods: { stock: {} } });
const OrdersDef = defineService<Orders>('test.Orders', { methods: { place: {} } });

let exporter: InMemorySpanExporter | undefined;
let contextManager: AsyncLocalStorageContextManager | undefined;

function registerSdk(): InMemorySpanExporter {
  exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return exporter;
}

afterEach(async () => {
  await closeAll();
  trace.disable();
  context.disable();
  contextManager = undefined;
  exporter = undefined;
});

async function threeApps(): Promise<{ orders: Remote<Orders>; front: CallistoApp }> {
  const inventory = await testApp({ application: 'inventory' });
  inventory.provide(InventoryDef, {
    async stock(item) {
      return { count: item.length, traceparent: callContext()?.attachments.traceparent };
    },
  });
  await inventory.start();
  const middle = await testApp({ application: 'orders' });
  const stock = middle.refer(InventoryDef, { url: inventory.address! });
  middle.provide(OrdersDef, {
    async place(item) {
      await new Promise((resolve) => setImmediate(resolve));
      // after an await: the nested call is still a child of this execution's span
      return stock.stock(item);
    },
  });
  await middle.start();
  const front = await testApp({ application: 'front' });
  return { orders: front.refer(OrdersDef, { url: middle.address!, cluster: 'failfast' }), front };
}

const byName = (spans: ReadableSpan[], name: string, kind: SpanKind) =>
  spans.find((span) => span.name === name && span.kind === kind)!;

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe('tracing', () => {
  it('makes one trace from the consumer through a provider to a nested call to a second provider', async () => {
    const spans = registerSdk();
    const { orders } = await threeApps();
    const answer = await orders.place('book');
    expect(answer.count).toBe(4);

    const finished = spans.getFinishedSpans();
    expect(finished).toHaveLength(4);
    const clientOrders = byName(finished, 'test.Orders/place', SpanKind.CLIENT);
    const serverOrders = byName(finished, 'test.Orders/place', SpanKind.SERVER);
    const clientStock = byName(finished, 'test.Inventory/stock', SpanKind.CLIENT);
    const serverStock = byName(finished, 'test.Inventory/stock', SpanKind.SERVER);
    const traceId = clientOrders.spanContext().traceId;
    for (const span of [serverOrders, clientStock, serverStock])
      expect(span.spanContext().traceId).toBe(traceId);
    expect(parentOf(clientOrders)).toBeUndefined();
    expect(parentOf(serverOrders)).toBe(clientOrders.spanContext().spanId);
    expect(parentOf(clientStock)).toBe(serverOrders.spanContext().spanId);
    expect(parentOf(serverStock)).toBe(clientStock.spanContext().spanId);
    // the W3C trace context the second provider received is its caller's span
    expect(answer.traceparent).toBe(`00-${traceId}-${clientStock.spanContext().spanId}-01`);

    expect(clientOrders.attributes).toMatchObject({
      'rpc.system': 'callisto',
      'rpc.service': 'test.Orders',
      'rpc.method': 'place',
      'server.address': '127.0.0.1',
    });
    expect(clientOrders.attributes['server.port']).toEqual(expect.any(Number));
    expect(serverStock.attributes).toMatchObject({
      'rpc.system': 'callisto',
      'rpc.service': 'test.Inventory',
      'rpc.method': 'stock',
      'network.peer.address': '127.0.0.1',
    });
    expect(clientOrders.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('continues the caller’s active span, and marks failures with their code', async () => {
    const spans = registerSdk();
    const provider = await testApp();
    provider.provide(InventoryDef, {
      async stock() {
        throw new Error('out of stock');
      },
    });
    await provider.start();
    const consumer = await testApp();
    const inventory = consumer.refer(InventoryDef, { url: provider.address!, cluster: 'failfast' });
    const tracer = trace.getTracer('test');
    await tracer.startActiveSpan('checkout', async (root: Span) => {
      await expect(inventory.stock('x')).rejects.toMatchObject({ code: 'ProviderError' });
      root.end();
    });
    const finished = spans.getFinishedSpans();
    const root = finished.find((span) => span.name === 'checkout')!;
    const client = byName(finished, 'test.Inventory/stock', SpanKind.CLIENT);
    const server = byName(finished, 'test.Inventory/stock', SpanKind.SERVER);
    expect(parentOf(client)).toBe(root.spanContext().spanId);
    expect(client.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'out of stock' });
    expect(client.attributes['error.type']).toBe('ProviderError');
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.attributes['error.type']).toBe('ProviderError');
  });

  it('makes no span while no SDK is registered; the nested call still continues the trace (docs/cluster.md)', async () => {
    const { orders } = await threeApps();
    const answer = await orders.place('pen');
    // the first call sends no traceparent (its trace id is derived from its call id); the call its
    // provider makes sends that trace id, with a new span id, unsampled
    expect(answer).toEqual({
      count: 3,
      traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/),
    });
  });

  it('is left out of an app created before any SDK was registered (it costs such an app nothing)', async () => {
    const provider = await testApp();
    provider.provide(InventoryDef, {
      stock: async (item) => ({ count: item.length, traceparent: undefined }),
    });
    await provider.start();
    const consumer = await testApp();
    const spans = registerSdk(); // too late for these two apps
    await consumer.refer(InventoryDef, { url: provider.address! }).stock('x');
    expect(spans.getFinishedSpans()).toEqual([]);
  });

  it('is left out with tracing: false', async () => {
    const spans = registerSdk();
    const provider = await testApp({ tracing: false });
    provider.provide(InventoryDef, {
      stock: async (item) => ({ count: item.length, traceparent: undefined }),
    });
    await provider.start();
    const consumer = await testApp({ tracing: false });
    await consumer.refer(InventoryDef, { url: provider.address! }).stock('x');
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});
