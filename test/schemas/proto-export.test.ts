/**
 * `exportProto`: the .proto it writes compiles with Debian's protoc and with Python's grpc_tools.protoc,
 * and its messages are the service's own: a message encoded with protobufjs from the EXPORTED file is
 * what the service's protobuf serializer decodes (and what it encodes, the exported file decodes), the
 * bytes equal to the original .proto's; Python's protobuf runtime, from the module Debian's protoc
 * generated, reads and writes the same bytes. For a service with schemas: the file compiles, and its
 * messages carry what the argument schema accepts. What cannot be written fails naming the method, the
 * path and what to declare.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProtobufSerializer, defineService, exportProto } from '../../src/index.js';
import { CatalogDef, catalogRoot } from './fixtures/catalog.js';
import { OrdersDef } from './fixtures/shop.js';
import { debianProtoc, grpcToolsProtoc, python } from './support/protoc.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `text` written as `<tmp>/<name>`, with an empty `<tmp>/gen` for generated code. */
function written(name: string, text: string): { dir: string; file: string; out: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'callisto-proto-'));
  dirs.push(dir);
  const out = path.join(dir, 'gen');
  mkdirSync(out);
  writeFileSync(path.join(dir, name), text);
  return { dir, file: name, out };
}

async function expectCompiles(name: string, text: string): Promise<{ dir: string; out: string }> {
  const target = written(name, text);
  const debian = await debianProtoc(target.dir, target.file, target.out);
  expect(debian.stderr, text).toBe('');
  expect(debian.code).toBe(0);
  const base = name.replace(/\.proto$/, '');
  expect(debian.files).toEqual([`${base}_pb2.py`]);
  const grpcOut = path.join(target.dir, 'grpc-gen');
  mkdirSync(grpcOut);
  const grpc = await grpcToolsProtoc(target.dir, target.file, grpcOut);
  expect(grpc.stderr, text).toBe('');
  expect(grpc.code).toBe(0);
  expect(grpc.files).toEqual([`${base}_pb2.py`, `${base}_pb2_grpc.py`]);
  return target;
}

/** The exported text as a protobufjs Root of its own (nothing shared with the original), loaded from a file. */
function load(text: string): protobuf.Root {
  const { dir, file } = written('exported.proto', text);
  return new protobuf.Root().loadSync(path.join(dir, file), { keepCase: true });
}

const ITEM = {
  sku: 'A-1',
  title: 'Lamp',
  state: 'ACTIVE',
  variants: [{ name: 'small', colors: ['red', 'blue'], size: { width: 1.5, height: 2 } }],
  prices: { EUR: { currency: 'EUR', units: '12', nanos: -5 } },
  updated: { seconds: '1700000000', nanos: 7 },
  batch: '9007199254740993',
  thumbnail: Buffer.from([1, 2, 3]),
  ratings: [5, 4],
};

describe('exportProto of a protobuf-declared service', () => {
  const text = exportProto(CatalogDef);

  it('names the package and service gRPC calls, every rpc with its streams, and only what they reach', () => {
    expect(text).toMatch(/^\/\/ shop\.catalog\.Catalog: written by Callisto/);
    expect(text).toContain('// gRPC calls /shop.catalog.Catalog/<rpc>, e.g. /shop.catalog.Catalog/getItem.');
    expect(text).toContain('package shop.catalog;');
    expect(text).toContain('service Catalog {');
    expect(text).toContain('rpc getItem (GetItemRequest) returns (Item);');
    expect(text).toContain('rpc removeItem (RemoveItemRequest) returns (google.protobuf.Empty);');
    expect(text).toContain('rpc watchPrices (WatchPricesRequest) returns (stream Price);');
    expect(text).toContain('rpc upload (stream Item) returns (UploadSummary);');
    expect(text).toContain('rpc chat (stream Note) returns (stream Note);');
    expect(text).toContain('import "google/protobuf/empty.proto";');
    expect(text).toContain('import "google/protobuf/timestamp.proto";');
    expect(text).not.toMatch(/message Unused\b/);
    // nested types come with their message, reached or not
    expect(text).toMatch(/message Item \{\n {2}enum State \{/);
    expect(text).toContain('message Unreached {');
    expect(text).toContain('reserved 20, 30 to 40;');
    expect(text).toContain('reserved "legacy";');
    expect(text).toContain('oneof _version { int32 version = 2; }');
  });

  it('compiles with Debian protoc and grpc_tools.protoc', async () => {
    await expectCompiles('catalog.proto', text);
  });

  it("round-trips with the service's own protobuf serializer, byte for byte", () => {
    const exported = load(text);
    const serializer = createProtobufSerializer();
    // request: encoded from the exported file, decoded by the provider's view of getItem
    const request = exported.lookupType('shop.catalog.GetItemRequest');
    const requestBytes = request.encode(request.fromObject({ sku: 'A-1', version: 3 })).finish();
    const provider = serializer.forMethod!(CatalogDef, 'getItem', 'provider');
    expect(provider.decode(requestBytes)).toEqual(['A-1', 3]);
    const original = catalogRoot.lookupType('shop.catalog.GetItemRequest');
    expect(Buffer.from(requestBytes)).toEqual(
      Buffer.from(original.encode(original.fromObject({ sku: 'A-1', version: 3 })).finish()),
    );
    // and back: what the consumer's view encodes, the exported file decodes
    const consumer = serializer.forMethod!(CatalogDef, 'getItem', 'consumer');
    expect(request.toObject(request.decode(consumer.encode(['B-2', 4]) as Uint8Array))).toEqual({
      sku: 'B-2',
      version: 4,
    });
    // response: every kind of field
    const item = exported.lookupType('shop.catalog.Item');
    const itemBytes = item.encode(item.fromObject(ITEM)).finish();
    const decoded = consumer.decode(itemBytes);
    const originalItem = catalogRoot.lookupType('shop.catalog.Item');
    expect(Buffer.from(itemBytes)).toEqual(
      Buffer.from(originalItem.encode(originalItem.fromObject(ITEM)).finish()),
    );
    expect(decoded).toMatchObject({ ...ITEM, thumbnail: Buffer.from([1, 2, 3]) });
    const back = provider.encode(decoded) as Uint8Array;
    expect(item.toObject(item.decode(back), { longs: String, enums: String, bytes: Buffer })).toEqual(ITEM);
  });

  it("round-trips with Python's protobuf runtime, from the module Debian's protoc generated", async () => {
    const { out } = await expectCompiles('catalog.proto', text);
    const serializer = createProtobufSerializer();
    const consumer = serializer.forMethod!(CatalogDef, 'getItem', 'consumer');
    const provider = serializer.forMethod!(CatalogDef, 'getItem', 'provider');
    // the proto3 JSON form: a Timestamp is an RFC 3339 string, bytes base64
    const json = JSON.stringify({
      ...ITEM,
      updated: '2023-11-14T22:13:20.000000007Z',
      thumbnail: Buffer.from([1, 2, 3]).toString('base64'),
    });
    const script = [
      'from google.protobuf import json_format',
      'import catalog_pb2',
      'item = json_format.Parse(sys.argv[1], catalog_pb2.Item())',
      'sys.stdout.write(item.SerializeToString().hex())',
    ].join('\n');
    const bytes = Buffer.from((await python(out, script, [json])).trim(), 'hex');
    expect(consumer.decode(bytes)).toMatchObject({ ...ITEM, thumbnail: Buffer.from([1, 2, 3]) });
    // and back: Callisto's bytes read by Python
    const encoded = Buffer.from(provider.encode(consumer.decode(bytes)) as Uint8Array).toString('hex');
    const read = [
      'from google.protobuf import json_format',
      'import catalog_pb2',
      'item = catalog_pb2.Item()',
      'item.ParseFromString(bytes.fromhex(sys.argv[1]))',
      'sys.stdout.write(json_format.MessageToJson(item, preserving_proto_field_name=True))',
    ].join('\n');
    const parsed = JSON.parse(await python(out, read, [encoded])) as Record<string, unknown>;
    expect(parsed).toMatchObject({ sku: 'A-1', state: 'ACTIVE', batch: '9007199254740993', ratings: [5, 4] });
    expect(parsed['updated']).toBe('2023-11-14T22:13:20.000000007Z');
  });

  it('a declaration naming a subset of rpcs exports those; a type of another package is refused', () => {
    const some = defineService<{ getItem(): unknown }>('shop.catalog.Catalog', {
      methods: { getItem: {} },
      protobuf: catalogRoot,
    });
    const subset = exportProto(some);
    expect(subset).toContain('rpc getItem');
    expect(subset).not.toContain('rpc removeItem');
    expect(subset).not.toContain('google/protobuf/empty.proto');
    const other = protobuf.parse(
      `syntax = "proto3"; package a; service S { rpc m (b.Req) returns (b.Req); }`,
      new protobuf.Root(),
    ).root;
    protobuf.parse('syntax = "proto3"; package b; message Req { string x = 1; }', other);
    const crossing = defineService<{ m(): unknown }>('a.S', { methods: { m: {} }, protobuf: other });
    expect(() => exportProto(crossing)).toThrow(
      /^a\.S: rpc m uses b\.Req, of package b, and the service is in package a: a \.proto holds one package; declare b\.Req in package a/,
    );
  });
});

describe('exportProto of a service with schemas', () => {
  const { legacy: _legacy, ...methods } = OrdersDef.methods!;
  const Orders = defineService<unknown>('shop.v1.Orders', { methods });
  const text = exportProto(Orders);

  it('maps the schemas as documented', () => {
    expect(text).toContain('package shop.v1;');
    expect(text).toContain('service Orders {');
    expect(text).toContain('rpc create (CreateRequest) returns (CreateResponse);');
    expect(text).toContain('rpc cancel (CancelRequest) returns (google.protobuf.Empty);');
    expect(text).toContain('rpc count (google.protobuf.Empty) returns (CountResponse);');
    expect(text).toContain('rpc find (FindRequest) returns (FindResponse);');
    expect(text).toContain('rpc watch (WatchRequest) returns (stream WatchResponse);');
    expect(text).toMatch(/message CreateRequest \{[\s\S]*string customer = 1;\n {2}Order order = 2;\n\}/);
    expect(text).toMatch(
      /message CancelRequest \{\n {2}int64 id = 1;\n {2}oneof _reason \{ string reason = 2; \}\n\}/,
    );
    expect(text).toContain('message CountResponse {\n  double value = 1;\n}');
    expect(text).toMatch(/message FindResponse \{[\s\S]*repeated Value value = 1;\n\}/);
    expect(text).toContain('oneof _limit { int32 limit = 2; }');
    expect(text).toMatch(
      /message Address \{\n {2}string city = 1;\n {2}oneof _zip \{ string zip = 2; \}\n\}/,
    );
    expect(text).toMatch(/enum Priority \{\n {6}LOW = 0;\n {6}HIGH = 1;\n {4}\}/);
    expect(text).toContain('map<string, string> labels = 6;');
    expect(text).toContain('repeated Lines lines = 3;');
    expect(text).toContain('bool paid = 8;');
    // the shared $defs type is written once, top-level
    expect(text.match(/message Address \{/g)).toHaveLength(1);
  });

  it('compiles with Debian protoc and grpc_tools.protoc', async () => {
    await expectCompiles('orders.proto', text);
  });

  it('its request message carries what the argument schema accepts', () => {
    const exported = load(text);
    const request = exported.lookupType('shop.v1.CreateRequest');
    const order = {
      lines: [{ sku: 'A-1', quantity: 2 }],
      address: { city: 'Oslo', zip: '0150' },
      priority: 'HIGH',
    };
    const bytes = request.encode(request.fromObject({ customer: 'ann', order })).finish();
    const decoded = request.toObject(request.decode(bytes), { enums: String, longs: Number });
    const args = [decoded['customer'], decoded['order']];
    expect(args).toEqual(['ann', order]);
    const schema = OrdersDef.methods!.create!.args as z.ZodType;
    expect(schema.safeParse(args).success).toBe(true);
  });

  it('what cannot be written fails naming the method, the path and what to do', () => {
    const refused = (args: z.ZodType, returns: z.ZodType = z.void()) =>
      exportProto(defineService<unknown>('x.Svc', { methods: { put: { args, returns } } }));
    expect(() => refused(z.tuple([z.object({ when: z.date() })]))).toThrow(
      /^x\.Svc\.put: args\[0\]\.when: Date cannot be represented in JSON Schema; use a JSON type/,
    );
    expect(() =>
      refused(z.tuple([z.object({ tags: z.array(z.union([z.string(), z.object({ a: z.string() })])) })])),
    ).toThrow(/^x\.Svc\.put: args\[0\]\.tags\[\]: a union cannot be written as protobuf; use one type/);
    expect(() => refused(z.tuple([z.array(z.array(z.string()))]))).toThrow(
      /^x\.Svc\.put: args\[0\]\[\]: a list of lists .* wrap the inner list in an object/,
    );
    expect(() => refused(z.tuple([z.any()]))).toThrow(/^x\.Svc\.put: args\[0\]: a value of any type/);
    expect(() => refused(z.tuple([z.string()]), z.object({ value: z.string() }))).toThrow(
      /^x\.Svc\.put: returns: an object whose only field is named value/,
    );
    expect(() => refused(z.tuple([z.enum(['a-b'])]))).toThrow(
      /args\[0\]: the enum value "a-b" is not a protobuf identifier/,
    );
    expect(() =>
      exportProto(defineService<unknown>('x.Svc', { methods: { put: { args: z.tuple([]) } } })),
    ).toThrow(/^x\.Svc\.put: returns: declares no result schema; declare returns/);
    expect(() =>
      exportProto(
        defineService<unknown>('x.Svc', {
          methods: { up: { stream: 'client', args: z.tuple([z.any()]), returns: z.void() } },
        }),
      ),
    ).toThrow(
      /^x\.Svc\.up: stream: a client stream's messages cannot be read from its argument schema; declare the service's \.proto/,
    );
    expect(() =>
      exportProto(
        defineService<unknown>('x-y.Svc', { methods: { a: { args: z.tuple([]), returns: z.void() } } }),
      ),
    ).toThrow(/the service name "x-y\.Svc" is not a protobuf full name/);
  });

  it('a service with neither protobuf messages nor schemas: what to declare', () => {
    expect(() => exportProto(defineService<unknown>('x.Bare', { methods: { a: {} } }))).toThrow(
      /^x\.Bare: declares neither protobuf messages nor argument schemas, so its \.proto cannot be written: declare its messages \(defineService\('x\.Bare', \{ protobuf: root \}\).* or each method's schemas/,
    );
    expect(() => exportProto(defineService<unknown>('x.Bare'))).toThrow(/^x\.Bare: declares neither/);
  });
});
