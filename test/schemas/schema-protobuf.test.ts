/**
 * A service defined in TypeScript with schemas (`args`, `returns`) has protobuf messages of its own,
 * those `exportProto` writes: callers that generated their code from the exported .proto (protobufjs
 * loading it here) call it with protobuf bodies on the HTTP entry and through the protobuf serializer
 * over TCP, the argument schemas checked on the decoded messages; what Callisto writes protobufjs reads
 * from the exported file and the other way round. A service whose schemas cannot be written as protobuf
 * has no messages (415, as for one without schemas).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AppOptions, createProtobufSerializer, defineService, exportProto } from '../../src/index.js';
import { protoFromReflection } from '../../src/service/proto/proto-from-reflection.js';
import { renderProto } from '../../src/service/proto/proto-render.js';
import { closeAll, testApp } from '../support/apps.js';
import { type Orders, OrdersDef, ordersImpl } from './fixtures/shop.js';
import { debianProtoc, python } from './support/protoc.js';

const { legacy: _legacy, ...methods } = OrdersDef.methods!;
const SchemaOrdersDef = defineService<Omit<Orders, 'legacy'>>('shop.v1.Orders', {
  methods: methods as never,
});
const { legacy: _impl, ...schemaImpl } = ordersImpl;

const dir = mkdtempSync(path.join(tmpdir(), 'callisto-schema-proto-'));
const file = path.join(dir, 'orders.proto');
writeFileSync(file, exportProto(SchemaOrdersDef));
/** The caller's side: generated from the exported .proto only. */
const exported = new protobuf.Root().loadSync(file, { keepCase: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(closeAll);

const withProtobuf: AppOptions = {
  extend: (extensions) => extensions.register('serializer', 'protobuf', createProtobufSerializer()),
};
const LONGS = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };
const ORDER = {
  lines: [{ sku: 'A-1', quantity: 2 }],
  address: { city: 'Oslo', zip: '0150' },
  priority: 'HIGH',
};

async function provider() {
  const app = await testApp({ ...withProtobuf, server: { http: { port: 0 } } });
  app.provide(SchemaOrdersDef, schemaImpl);
  await app.start();
  return app;
}

async function postMessage(url: string, type: string, message: object) {
  const request = exported.lookupType(type);
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body: request.encode(request.fromObject(message)).finish(),
  });
  return {
    status: answer.status,
    type: answer.headers.get('content-type'),
    bytes: new Uint8Array(await answer.arrayBuffer()),
  };
}

describe('a service with schemas has protobuf messages of its own', () => {
  it('HTTP entry: protobuf bodies from the exported .proto, validated by the argument schema', async () => {
    const app = await provider();
    const base = `http://127.0.0.1:${app.httpPort}/shop.v1.Orders`;
    const created = await postMessage(`${base}/create`, 'shop.v1.CreateRequest', {
      customer: 'ann',
      order: ORDER,
    });
    expect(created.status).toBe(200);
    expect(created.type).toBe('application/x-protobuf');
    const response = exported.lookupType('shop.v1.CreateResponse');
    expect(response.toObject(response.decode(created.bytes), LONGS)).toEqual({
      ...schemaImpl.create('ann', ORDER as never),
      address: { city: 'Oslo', zip: '0150' },
    });
    // a scalar result wrapped in `value`, a list, an optional parameter left out, nothing returned
    const count = await postMessage(`${base}/count`, 'google.protobuf.Empty', {});
    expect(exported.lookupType('shop.v1.CountResponse').decode(count.bytes).toJSON()).toEqual({ value: 3 });
    const found = await postMessage(`${base}/find`, 'shop.v1.FindRequest', { customer: 'bo' });
    const list = exported.lookupType('shop.v1.FindResponse');
    expect((list.toObject(list.decode(found.bytes), LONGS)['value'] as unknown[]).length).toBe(2);
    const cancelled = await postMessage(`${base}/cancel`, 'shop.v1.CancelRequest', { id: 7 });
    expect(cancelled.status).toBe(200);
    expect(cancelled.bytes.length).toBe(0);
    // the decoded message goes through the args schema: an empty customer is refused
    const refused = await postMessage(`${base}/create`, 'shop.v1.CreateRequest', {
      customer: '',
      order: ORDER,
    });
    expect(refused.status).toBe(400);
    expect(JSON.parse(Buffer.from(refused.bytes).toString())).toMatchObject({
      error: { code: 'BadRequest' },
    });
    // malformed bytes
    const garbage = await fetch(`${base}/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([0x0a, 0x7f, 0x01]),
    });
    expect(garbage.status).toBe(400);
  });

  it('over TCP with the protobuf serializer: a Callisto reference calls it', async () => {
    const app = await provider();
    const consumer = await testApp(withProtobuf);
    const orders = consumer.refer(SchemaOrdersDef, { url: `127.0.0.1:${app.port}`, serializer: 'protobuf' });
    expect(await orders.create('ann', ORDER as never)).toEqual({
      ...schemaImpl.create('ann', ORDER as never),
    });
    expect(await orders.count()).toBe(3);
    expect(await orders.find('bo', 1)).toHaveLength(1);
    expect(await orders.cancel(7)).toBeUndefined();
  });

  it('what Callisto writes protobufjs reads from the exported file, and the other way round', () => {
    const serializer = createProtobufSerializer();
    const provider = serializer.forMethod!(SchemaOrdersDef, 'create', 'provider');
    const consumer = serializer.forMethod!(SchemaOrdersDef, 'create', 'consumer');
    const value = schemaImpl.create('ann', ORDER as never);
    const response = exported.lookupType('shop.v1.CreateResponse');
    // (protobufjs also writes fields holding their default, protoc's code and Callisto leave them out:
    // the same message either way)
    expect(response.toObject(response.decode(provider.encode(value) as Uint8Array), LONGS)).toEqual(value);
    expect(consumer.decode(response.encode(response.fromObject(value)).finish())).toEqual(value);
    const request = exported.lookupType('shop.v1.CreateRequest');
    expect(request.toObject(request.decode(consumer.encode(['ann', ORDER]) as Uint8Array), LONGS)).toEqual({
      customer: 'ann',
      order: ORDER,
    });
    expect(
      provider.decode(request.encode(request.fromObject({ customer: 'ann', order: ORDER })).finish()),
    ).toEqual(['ann', ORDER]);
  });

  it("a client of Python's protobuf runtime, generated by Debian's protoc from the exported file", async () => {
    const out = path.join(dir, 'gen');
    mkdirSync(out, { recursive: true });
    const compiled = await debianProtoc(dir, 'orders.proto', out);
    expect(compiled.stderr).toBe('');
    const app = await provider();
    const encode = [
      'from google.protobuf import json_format',
      'import orders_pb2',
      'sys.stdout.write(json_format.Parse(sys.argv[1], orders_pb2.CreateRequest()).SerializeToString().hex())',
    ].join('\n');
    const body = Buffer.from(
      (await python(out, encode, [JSON.stringify({ customer: 'cy', order: ORDER })])).trim(),
      'hex',
    );
    const answer = await fetch(`http://127.0.0.1:${app.httpPort}/shop.v1.Orders/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    expect(answer.status).toBe(200);
    const decode = [
      'from google.protobuf import json_format',
      'import orders_pb2',
      'message = orders_pb2.CreateResponse()',
      'message.ParseFromString(bytes.fromhex(sys.argv[1]))',
      'sys.stdout.write(json_format.MessageToJson(message, preserving_proto_field_name=True))',
    ].join('\n');
    const hex = Buffer.from(await answer.arrayBuffer()).toString('hex');
    expect(JSON.parse(await python(out, decode, [hex]))).toMatchObject({
      id: '7',
      customer: 'cy',
      address: { city: 'Oslo', zip: '0150' },
      priority: 'HIGH',
      labels: { channel: 'web' },
      total: 12.5,
    });
  });

  it('its reflection objects (what gRPC reflection reads) describe the exported .proto', () => {
    const binding = SchemaOrdersDef.protobuf!;
    expect(binding.origin).toBe('schemas');
    expect(binding.protoService).toBe('shop.v1.Orders');
    const read = protoFromReflection('shop.v1.Orders', binding.reflected, undefined);
    const text = renderProto({
      package: read.package,
      service: { name: read.service, rpcs: read.rpcs },
      types: read.types,
      imports: read.imports,
      header: [],
    });
    // the same messages and rpcs, each name resolved (one writes `Order`, the other `CreateRequest.Order`)
    const shape = (proto: string, name: string) => {
      writeFileSync(path.join(dir, name), proto);
      const root = new protobuf.Root().loadSync(path.join(dir, name), { keepCase: true });
      root.resolveAll();
      const out: Record<string, unknown> = {};
      const walk = (node: protobuf.ReflectionObject): void => {
        if (node instanceof protobuf.Type) {
          out[node.fullName] = node.fieldsArray.map((f) => [
            f.name,
            f.id,
            f.resolvedType?.fullName ?? f.type,
            f.repeated,
            f.map,
            f.partOf?.name,
          ]);
        } else if (node instanceof protobuf.Enum) {
          out[node.fullName] = node.values;
        } else if (node instanceof protobuf.Service) {
          out[node.fullName] = node.methodsArray.map((m) => [
            m.name,
            m.resolvedRequestType?.fullName,
            m.resolvedResponseType?.fullName,
            m.requestStream,
            m.responseStream,
          ]);
        }
        if (node instanceof protobuf.Namespace) for (const nested of node.nestedArray) walk(nested);
      };
      walk(root.lookup('shop')!);
      return out;
    };
    expect(shape(text, 'reflected.proto')).toEqual(shape(exportProto(SchemaOrdersDef), 'schemas.proto'));
  });

  it('schemas that cannot be written as protobuf: no messages, 415', async () => {
    const Dated = defineService<{ at(when: Date): void }>('shop.v1.Dated', {
      methods: { at: { args: z.tuple([z.date()]), returns: z.void() } },
    });
    expect(Dated.protobuf).toBeUndefined();
    const app = await testApp({ server: { http: { port: 0 } } });
    app.provide(Dated, { at: () => undefined });
    await app.start();
    const answer = await fetch(`http://127.0.0.1:${app.httpPort}/shop.v1.Dated/at`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array(),
    });
    expect(answer.status).toBe(415);
  });
});
