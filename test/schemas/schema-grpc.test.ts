/**
 * A service defined in TypeScript with schemas, over gRPC with a peer nobody here wrote: a grpc-js
 * server built from the EXPORTED .proto (@grpc/proto-loader) serves shop.v1.Orders, and a Callisto
 * gRPC reference of the schema-only definition (no .proto on the consumer) calls it: unary calls
 * (object, scalar, list and empty results, an optional parameter left out) and a server stream, at the
 * path the exported file names, `/shop.v1.Orders/<method>`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defineService, exportProto } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { type Orders, OrdersDef, ordersImpl } from './fixtures/shop.js';

const { legacy: _legacy, ...methods } = OrdersDef.methods!;
const SchemaOrdersDef = defineService<Omit<Orders, 'legacy'>>('shop.v1.Orders', {
  methods: methods as never,
});
const ORDER = { lines: [{ sku: 'A-1', quantity: 2 }], address: { city: 'Oslo' }, priority: 'HIGH' as const };

const dir = mkdtempSync(path.join(tmpdir(), 'callisto-schema-grpc-'));
const servers: grpc.Server[] = [];
afterEach(async () => {
  await closeAll();
  for (const server of servers.splice(0)) server.forceShutdown();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function ordersServer(paths: string[]): Promise<string> {
  const file = path.join(dir, 'orders.proto');
  writeFileSync(file, exportProto(SchemaOrdersDef));
  const loaded = protoLoader.loadSync(file, { keepCase: true, longs: Number, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(loaded) as unknown as {
    shop: { v1: { Orders: { service: grpc.ServiceDefinition } } };
  };
  const unary =
    (run: (request: Record<string, unknown>) => unknown) =>
    (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      paths.push(`${call.getPath()} ${JSON.stringify(call.request)}`);
      callback(null, run(call.request) as never);
    };
  const server = new grpc.Server();
  servers.push(server);
  server.addService(pkg.shop.v1.Orders.service, {
    create: unary((request) => ({
      ...ordersImpl.create(request['customer'] as string, request['order'] as never),
      id: 42,
    })),
    cancel: unary(() => ({})),
    count: unary(() => ({ value: 3 })),
    find: unary((request) => ({
      value: ordersImpl.find(request['customer'] as string, (request['limit'] as number | undefined) ?? 2),
    })),
    watch: (call: grpc.ServerWritableStream<{ id: number }, unknown>) => {
      paths.push(`${call.getPath()} ${JSON.stringify(call.request)}`);
      call.write({ id: call.request.id, status: 'OPEN' });
      call.write({ id: call.request.id, status: 'SHIPPED' });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  return `grpc://127.0.0.1:${port}`;
}

describe('a schema-defined service over gRPC, served by grpc-js from the exported .proto', () => {
  it('a Callisto gRPC reference calls it with the schema messages', async () => {
    const paths: string[] = [];
    const url = await ordersServer(paths);
    const consumer = await testApp();
    const orders = consumer.refer(SchemaOrdersDef, { url, protocol: 'grpc', retries: 0 });
    const created = await orders.create('ann', ORDER);
    expect(created).toEqual({ ...ordersImpl.create('ann', ORDER), id: 42 });
    expect(await orders.count()).toBe(3);
    expect(await orders.find('bo')).toHaveLength(2);
    expect(await orders.find('bo', 1)).toHaveLength(1);
    expect(await orders.cancel(7)).toBeUndefined();
    const messages: unknown[] = [];
    for await (const message of orders.watch(5)) messages.push(message);
    expect(messages).toEqual([
      { id: 5, status: 'OPEN' },
      { id: 5, status: 'SHIPPED' },
    ]);
    expect(paths.map((line) => line.split(' ')[0])).toEqual([
      '/shop.v1.Orders/create',
      '/shop.v1.Orders/count',
      '/shop.v1.Orders/find',
      '/shop.v1.Orders/find',
      '/shop.v1.Orders/cancel',
      '/shop.v1.Orders/watch',
    ]);
    // the optional parameter left out is absent on the wire (proto-loader's default), given when given
    expect(paths[2]).toContain('"customer":"bo"');
    expect(paths[3]).toContain('"limit":1');
  });
});
