/**
 * The protobuf codec of a service with schemas (src/service/proto/schema-root.ts), against protobufjs
 * loading the exported .proto: negative and 64-bit integers, packed and unpacked lists, unknown fields
 * skipped, maps, and what it refuses (truncated bytes, a `__proto__` map key, nesting past 100, bad
 * UTF-8); random bytes either decode or are refused, never anything else.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProtobufSerializer, defineService, exportProto } from '../../src/index.js';

const Tree: z.ZodType<unknown> = z.object({
  label: z.string(),
  get children() {
    return z.array(Tree);
  },
});
const NumbersDef = defineService<unknown>('codec.Numbers', {
  methods: {
    put: {
      args: z.tuple([
        z.object({
          small: z.int32(),
          big: z.number().int(),
          ratio: z.number(),
          flags: z.array(z.boolean()),
          counts: z.array(z.int32()),
          names: z.array(z.string()),
          tags: z.record(z.string(), z.int32()),
          kind: z.enum(['A', 'B']),
        }),
      ]),
      returns: z.void(),
    },
    tree: { args: z.tuple([Tree]), returns: z.void() },
  },
});

const dir = mkdtempSync(path.join(tmpdir(), 'callisto-codec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(path.join(dir, 'numbers.proto'), exportProto(NumbersDef));
const exported = new protobuf.Root().loadSync(path.join(dir, 'numbers.proto'), { keepCase: true });
const request = exported.lookupType('codec.PutRequest');
const serializer = createProtobufSerializer();
const provider = serializer.forMethod!(NumbersDef, 'put', 'provider');
const consumer = serializer.forMethod!(NumbersDef, 'put', 'consumer');
const VALUE = {
  small: -5,
  big: -9_007_199_254_740_991,
  ratio: -0.25,
  flags: [true, false, true],
  counts: [0, -1, 2_147_483_647, -2_147_483_648],
  names: ['', 'é', '名前'],
  tags: { a: 1, b: -2 },
  kind: 'B',
};

describe('the codec of a service with schemas', () => {
  it('reads what protobufjs writes and writes what it reads: negative, 64-bit, lists, maps, enums', () => {
    const bytes = request.encode(request.fromObject({ arg1: VALUE })).finish();
    expect(provider.decode(bytes)).toEqual([VALUE]);
    const ours = consumer.encode([VALUE]) as Uint8Array;
    expect(request.toObject(request.decode(ours), { longs: Number, enums: String })).toEqual({ arg1: VALUE });
  });

  it('reads lists packed and unpacked, and skips unknown fields', () => {
    const writer = protobuf.Writer.create();
    // arg1 (field 1) holding counts (field 5) unpacked, and an unknown field 99 of each wire type
    const inner = protobuf.Writer.create();
    inner
      .uint32((5 << 3) | 0)
      .int32(3)
      .uint32((5 << 3) | 0)
      .int32(-4);
    inner
      .uint32((99 << 3) | 0)
      .uint64(12345)
      .uint32((99 << 3) | 1)
      .fixed64(1)
      .uint32((99 << 3) | 2)
      .string('x');
    inner.uint32((99 << 3) | 5).fixed32(7);
    writer.uint32((1 << 3) | 2).bytes(inner.finish());
    const [decoded] = provider.decode(writer.finish()) as [Record<string, unknown>];
    expect(decoded['counts']).toEqual([3, -4]);
    expect(decoded['small']).toBe(0);
    expect(decoded['kind']).toBe('A');
  });

  it('refuses truncated bytes, a __proto__ map key, bad UTF-8 and nesting past 100', () => {
    const bytes = request.encode(request.fromObject({ arg1: VALUE })).finish();
    expect(() => provider.decode(bytes.subarray(0, bytes.length - 3))).toThrow(/malformed protobuf/);
    const evil = request.encode(request.fromObject({ arg1: { tags: { ['__proto__']: 1 } } })).finish();
    expect(() => provider.decode(evil)).toThrow(/__proto__/);
    const badText = protobuf.Writer.create();
    const names = protobuf.Writer.create()
      .uint32((6 << 3) | 2)
      .bytes(new Uint8Array([0xff, 0xfe]))
      .finish();
    badText.uint32((1 << 3) | 2).bytes(names);
    expect(() => provider.decode(badText.finish())).toThrow();
    // 150 levels of Tree.children (field 2), written by hand: protobufjs refuses to write it
    let tree = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .string('leaf')
      .finish();
    for (let i = 0; i < 150; i++)
      tree = protobuf.Writer.create()
        .uint32((2 << 3) | 2)
        .bytes(tree)
        .finish();
    const deep = protobuf.Writer.create()
      .uint32((1 << 3) | 2)
      .bytes(tree)
      .finish();
    const treeView = serializer.forMethod!(NumbersDef, 'tree', 'provider');
    expect(() => treeView.decode(deep)).toThrow(/deeper than 100/);
  });

  it('random bytes decode or are refused with an error, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          provider.decode(bytes);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
