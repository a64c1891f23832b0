import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createExtensionRegistry } from '../extension/extension-registry.js';
import {
  createJsonSerializer,
  createMsgpackSerializer,
  createSerializerTable,
  createV8Serializer,
  registerBuiltinSerializers,
} from './index.js';
import {
  LARGE_BYTES,
  MSGPACK_LARGE_BUFFER_EXTENSION,
  MSGPACK_LARGE_UINT8ARRAY_EXTENSION,
} from './msgpack.js';
import type { Serializer } from './serializer.js';

const serializers: Serializer[] = [createJsonSerializer(), createMsgpackSerializer(), createV8Serializer()];

function roundTrip(serializer: Serializer, value: unknown): unknown {
  return serializer.decode(serializer.encode(value));
}

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

interface Case {
  name: string;
  value: unknown;
  /** What a serializer gives back instead of `value`, when it knowingly differs. */
  lossy?: Partial<Record<string, unknown>>;
}

const cases: Case[] = [
  { name: 'string', value: 'hello test' },
  { name: 'empty string', value: '' },
  { name: 'unicode string', value: 'héllo 🌍 \u0000 \u2028' },
  { name: 'integer', value: 42 },
  { name: 'negative float', value: -1.5 },
  { name: 'max safe integer', value: Number.MAX_SAFE_INTEGER },
  { name: 'large float', value: 1e300 },
  { name: 'zero', value: 0 },
  { name: '-0', value: -0, lossy: { msgpack: 0 } },
  { name: 'NaN', value: Number.NaN },
  { name: 'Infinity', value: Number.POSITIVE_INFINITY },
  { name: '-Infinity', value: Number.NEGATIVE_INFINITY },
  { name: 'booleans', value: [true, false] },
  { name: 'null', value: null },
  { name: 'undefined', value: undefined },
  { name: 'bigint 0', value: 0n },
  { name: 'bigints in int64 range', value: [123n, -123n, 2n ** 63n - 1n, -(2n ** 63n)] },
  { name: 'bigints in uint64 range', value: [2n ** 63n, 2n ** 64n - 1n] },
  { name: 'huge bigints', value: [2n ** 64n, 2n ** 200n, -(2n ** 200n) - 7n] },
  { name: 'Date at epoch', value: new Date(0) },
  { name: 'Date with ms', value: new Date('2024-02-29T12:34:56.789Z') },
  { name: 'Date before 1970', value: new Date('1901-01-01T00:00:00.001Z') },
  { name: 'Date far ahead', value: new Date('2999-12-31T23:59:59.999Z') },
  { name: 'empty Map', value: new Map() },
  {
    name: 'Map with mixed keys',
    value: new Map<unknown, unknown>([
      ['b', 1],
      [1, 'one'],
      [{ k: 1 }, [1, 2]],
      [2n, null],
      [true, undefined],
    ]),
  },
  { name: 'nested Maps', value: new Map([['outer', new Map([['inner', new Map([[1, 2]])]])]]) },
  { name: 'empty Set', value: new Set() },
  { name: 'Set', value: new Set<unknown>(['a', 1, 2n, null, { x: 1 }]) },
  { name: 'Buffer', value: Buffer.from([0, 1, 2, 254, 255]) },
  { name: 'empty Buffer', value: Buffer.alloc(0) },
  { name: 'Uint8Array', value: new Uint8Array([9, 8, 7]) },
  { name: 'Uint8Array view with offset', value: new Uint8Array([1, 2, 3, 4, 5]).subarray(1, 4) },
  { name: 'large Uint8Array (64 KiB)', value: new Uint8Array(64 * 1024).fill(7) },
  { name: 'large Buffer in an object', value: { data: Buffer.alloc(70_000, 8), n: 1 } },
  { name: 'large Uint8Array view with offset', value: new Uint8Array(80_000).fill(9).subarray(3, 70_003) },
  { name: 'large Float64Array', value: new Float64Array(10_000).fill(1.5) },
  { name: 'Int32Array', value: new Int32Array([1, -2, 2 ** 31 - 1]) },
  { name: 'Float64Array', value: new Float64Array([1.5, Number.NaN, Number.NEGATIVE_INFINITY]) },
  { name: 'undefined as property value', value: { a: undefined, b: 1 } },
  { name: 'undefined in arrays', value: [undefined, 1, undefined] },
  {
    name: 'special numbers in arrays',
    value: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
  },
  { name: 'plain object', value: { id: 7, name: 'user-7', email: 'u7@example.com', age: 37, active: true } },
  { name: 'object with a $t key', value: { $t: 'u', v: 1 } },
  { name: 'object with a $t key and specials', value: { $t: 'M', v: [1, 2], d: new Date(5) } },
  { name: 'nested $t objects', value: { a: { $t: 'o', v: { $t: 'n', v: '1' } } } },
  { name: 'keys that look like prototype members', value: { constructor: 1, toString: 'x', valueOf: null } },
  {
    name: 'nested combination',
    value: {
      list: [new Map<unknown, unknown>([[1, new Set([new Date(1), undefined, 3n])]]), Number.NaN, undefined],
      record: { c: undefined, d: -5n, e: Buffer.from('hi'), f: { g: [new Map([['x', { y: undefined }]])] } },
      deep: [[[[{ when: new Date(99) }]]]],
    },
  },
  { name: 'class instance (as plain object)', value: new Point(1, 2), lossy: { all: { x: 1, y: 2 } } },
];

describe.each(serializers)('$name serializer', (serializer) => {
  it.each(cases)('round-trips $name', ({ value, lossy }) => {
    const expected = lossy?.[serializer.name] ?? lossy?.all ?? value;
    const decoded = roundTrip(serializer, value);
    expect(decoded).toStrictEqual(expected);
    if (typeof expected === 'number') expect(Object.is(decoded, expected)).toBe(true);
  });

  it('keeps the byte container types: Buffer stays Buffer, Uint8Array stays Uint8Array', () => {
    const decoded = roundTrip(serializer, { buf: Buffer.from([1]), u8: new Uint8Array([2]) }) as {
      buf: unknown;
      u8: unknown;
    };
    expect(Buffer.isBuffer(decoded.buf)).toBe(true);
    expect(decoded.u8).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(decoded.u8)).toBe(false);
  });

  it('keeps Map insertion order and undefined-valued keys', () => {
    const map = new Map<unknown, unknown>([
      ['z', 1],
      [3, 2],
      ['a', 3],
    ]);
    const decoded = roundTrip(serializer, { map, u: undefined }) as { map: Map<unknown, unknown> };
    expect([...decoded.map.keys()]).toEqual(['z', 3, 'a']);
    expect(Object.keys(decoded)).toEqual(['map', 'u']);
  });

  it('round-trips an invalid Date as an invalid Date', () => {
    const decoded = roundTrip(serializer, new Date(Number.NaN));
    expect(decoded).toBeInstanceOf(Date);
    expect(Number.isNaN((decoded as Date).getTime())).toBe(true);
  });

  it('does not change the value it encodes', () => {
    const inner = new Map([['k', 1]]);
    const value = { list: [1, inner], n: 1n, u: undefined };
    serializer.encode(value);
    expect(value.list[1]).toBe(inner);
    expect(value).toStrictEqual({ list: [1, new Map([['k', 1]])], n: 1n, u: undefined });
  });

  it('returns bytes that stay valid after later encodes', () => {
    const first = serializer.encode({ a: 'first' });
    const copy = Uint8Array.from(first);
    for (let i = 0; i < 2000; i++) serializer.encode({ filler: 'x'.repeat(i % 100), i });
    expect(Uint8Array.from(first)).toEqual(copy);
    expect(serializer.decode(first)).toEqual({ a: 'first' });
  });

  it('decodes from a Uint8Array view into a larger buffer', () => {
    const bytes = serializer.encode({ a: [1, 'two'] });
    const padded = new Uint8Array(bytes.length + 10);
    padded.set(bytes, 5);
    expect(serializer.decode(padded.subarray(5, 5 + bytes.length))).toEqual({ a: [1, 'two'] });
  });

  it('round-trips arbitrary JSON-like values with dates, bigints, maps, sets and bytes', () => {
    fc.assert(
      fc.property(valueArbitrary(serializer.name !== 'msgpack'), (value) => {
        expect(roundTrip(serializer, value)).toStrictEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it('throws (and does not crash) on malformed input', () => {
    for (const bytes of malformedInputs(serializer)) {
      expect(() => serializer.decode(bytes), Buffer.from(bytes).toString('hex')).toThrow();
    }
  });

  it('throws on every truncation of a valid frame', () => {
    const bytes = serializer.encode({
      list: [1, 'two', new Map([[3, new Date(4)]])],
      n: 5n,
      b: Buffer.from('x'),
    });
    for (let end = 0; end < bytes.length; end++) {
      expect(() => serializer.decode(bytes.subarray(0, end)), `prefix of ${end} bytes`).toThrow();
    }
  });

  it('returns or throws, never crashes, on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          serializer.decode(bytes);
        } catch {
          // expected for most inputs
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('cannot pollute Object.prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
    let decoded: unknown;
    try {
      decoded = roundTrip(serializer, hostile);
    } catch {
      decoded = undefined; // json refuses the key
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    if (decoded !== undefined) {
      expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
      expect((decoded as { polluted?: unknown }).polluted).toBeUndefined();
    }
  });
});

describe('json serializer specifics', () => {
  const json = createJsonSerializer();
  const decodeText = (text: string): unknown => json.decode(Buffer.from(text));
  const encodeText = (value: unknown): string => Buffer.from(json.encode(value)).toString('utf8');

  it('writes plain values as plain JSON', () => {
    const value = { id: 1, name: 'a', tags: ['x', 'y'], nested: { ok: true, n: null } };
    expect(encodeText(value)).toBe(JSON.stringify(value));
    expect(encodeText('hello')).toBe('"hello"');
  });

  it('writes the documented tagged forms', () => {
    expect(encodeText(undefined)).toBe('{"$t":"u"}');
    expect(encodeText(-0)).toBe('{"$t":"f","v":"-0"}');
    expect(encodeText(12n)).toBe('{"$t":"n","v":"12"}');
    expect(encodeText(new Date(5))).toBe('{"$t":"D","v":5}');
    expect(encodeText(new Map([[1, 'a']]))).toBe('{"$t":"M","v":[1,"a"]}');
    expect(encodeText(new Set([1]))).toBe('{"$t":"S","v":[1]}');
    expect(encodeText(Buffer.from([1, 2]))).toBe('{"$t":"B","v":"AQI="}');
    expect(encodeText(new Uint8Array([1, 2]))).toBe('{"$t":"T","v":["Uint8Array","AQI="]}');
    expect(encodeText({ $t: 1 })).toBe('{"$t":"o","v":{"$t":1}}');
  });

  it('refuses __proto__ keys anywhere in a payload', () => {
    const hostile = [
      '{"__proto__": {"polluted": true}}',
      '{"a": [{"b": {"__proto__": {"polluted": true}}}]}',
      '{"$t": "o", "v": {"$t": 1, "__proto__": {"polluted": true}}}',
      '{"$t": "M", "v": ["k", {"__proto__": {"polluted": true}}]}',
      '{"$t": "S", "v": [{"__proto__": {"polluted": true}}]}',
    ];
    for (const text of hostile) expect(() => decodeText(text), text).toThrow(/__proto__/);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('refuses to encode an object with an own __proto__ key', () => {
    const value = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    expect(() => json.encode({ nested: value })).toThrow(/__proto__/);
  });

  it('treats constructor.prototype as data', () => {
    const decoded = decodeText('{"constructor": {"prototype": {"polluted": true}}}') as {
      constructor: unknown;
    };
    expect(decoded.constructor).toEqual({ prototype: { polluted: true } });
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('rejects malformed tagged values', () => {
    const bad = [
      '{"$t":"zz"}',
      '{"$t":1}',
      '{"$t":"n","v":"1.5"}',
      '{"$t":"n","v":12}',
      '{"$t":"n","v":""}',
      '{"$t":"f","v":"1"}',
      '{"$t":"D","v":"yesterday"}',
      '{"$t":"M","v":[1]}',
      '{"$t":"M","v":{}}',
      '{"$t":"S","v":"abc"}',
      '{"$t":"B","v":1}',
      '{"$t":"T","v":["Function","AA=="]}',
      '{"$t":"T","v":["constructor","AA=="]}',
      '{"$t":"T","v":["Int32Array","AAA="]}',
      '{"$t":"o","v":[1]}',
      '{"$t":"o","v":null}',
    ];
    for (const text of bad) expect(() => decodeText(text), text).toThrow();
  });

  it('throws on cycles and on nesting beyond the limit instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => json.encode(cyclic)).toThrow(RangeError);
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    expect(() => decodeText(deep)).toThrow();
  });

  it('refuses byte views it cannot rebuild', () => {
    expect(() => json.encode(new DataView(new ArrayBuffer(2)))).toThrow(/DataView/);
  });
});

describe('msgpack serializer specifics', () => {
  const msgpack = createMsgpackSerializer();

  it('copies decoded buffers out of the frame', () => {
    const frame = Buffer.from(msgpack.encode({ b: Buffer.from([1, 2, 3]) }));
    const decoded = msgpack.decode(frame) as { b: Buffer };
    frame.fill(0);
    expect([...decoded.b]).toEqual([1, 2, 3]);
  });

  it('decodes a byte array of LARGE_BYTES or more as a view of the body, a smaller one as a copy', () => {
    const large = new Uint8Array(LARGE_BYTES).fill(5);
    const buffer = Buffer.alloc(LARGE_BYTES + 1, 6);
    const body = Buffer.from(
      msgpack.encode([large, buffer, new Uint8Array(LARGE_BYTES - 1), Buffer.alloc(3)]),
    );
    const [u8, buf, smallU8, smallBuf] = msgpack.decode(body) as [Uint8Array, Buffer, Uint8Array, Buffer];
    // the large ones are views of the body's memory, of their own types, with their bytes
    expect(u8.constructor).toBe(Uint8Array);
    expect(Buffer.isBuffer(buf)).toBe(true);
    expect(u8.buffer).toBe(body.buffer);
    expect(buf.buffer).toBe(body.buffer);
    expect(Buffer.from(u8).equals(Buffer.from(large))).toBe(true);
    expect(buf.equals(buffer)).toBe(true);
    // the small ones keep nothing of the body alive
    expect(smallU8.buffer).not.toBe(body.buffer);
    expect(smallBuf.buffer).not.toBe(body.buffer);
  });

  it('copies a small byte array sent in a large-bytes extension (a peer’s choice, not a view)', () => {
    for (const type of [MSGPACK_LARGE_UINT8ARRAY_EXTENSION, MSGPACK_LARGE_BUFFER_EXTENSION]) {
      // ext 8, three data bytes
      const body = Buffer.from(new Uint8Array([0xc7, 3, type, 1, 2, 3]).buffer); // not from the pool
      expect(msgpack.measure?.(body, 100)).toBeGreaterThan(0);
      const decoded = msgpack.decode(body) as Uint8Array;
      expect([...decoded]).toEqual([1, 2, 3]);
      expect(decoded.buffer).not.toBe(body.buffer);
      // fixext 1 too
      expect([...(msgpack.decode(Buffer.from([0xd4, type, 9])) as Uint8Array)]).toEqual([9]);
    }
  });

  it('frames are self-describing: a fresh decoder reads frames from a long-lived encoder', () => {
    const value = { id: 1, name: 'n', nested: { a: 1, b: [{ c: 2 }] } };
    for (let i = 0; i < 5; i++) msgpack.encode(value);
    expect(createMsgpackSerializer().decode(msgpack.encode(value))).toEqual(value);
  });

  it('throws on cycles instead of overflowing the stack', () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => msgpack.encode(cyclic)).toThrow(RangeError);
  });

  it('rejects a malformed Map extension', () => {
    // fixext1 0x4d 0x00 followed by a one-element array
    expect(() => msgpack.decode(Buffer.from([0xd4, 0x4d, 0x00, 0x91, 0x01]))).toThrow(/Map/);
  });
});

describe('serializer table', () => {
  it('looks serializers up by id and by name', () => {
    const registry = createExtensionRegistry();
    registerBuiltinSerializers(registry);
    const table = createSerializerTable(registry);
    expect(table.byId(1)?.name).toBe('json');
    expect(table.byId(2)?.name).toBe('msgpack');
    expect(table.byId(3)?.name).toBe('v8');
    expect(table.byId(5)?.name).toBe('hessian2');
    expect(table.byId(0)).toBeUndefined();
    expect(table.byId(200)).toBeUndefined();
    expect(table.byName('msgpack').id).toBe(2);
    expect(() => table.byName('kryo')).toThrow(/kryo.*json, msgpack, v8, hessian2/);
  });

  it('keeps only the names asked for', () => {
    const registry = createExtensionRegistry();
    registerBuiltinSerializers(registry);
    const table = createSerializerTable(registry, ['msgpack']);
    expect(table.serializers.map((s) => s.name)).toEqual(['msgpack']);
    expect(table.byId(1)).toBeUndefined();
  });

  it('refuses duplicate and out-of-range ids', () => {
    const registry = createExtensionRegistry();
    registerBuiltinSerializers(registry);
    registry.register('serializer', 'other', { ...createJsonSerializer(), name: 'other' });
    expect(() => createSerializerTable(registry)).toThrow(/"json" and "other" both use id 1/);
    registry.register('serializer', 'other', { ...createJsonSerializer(), id: 256, name: 'other' });
    expect(() => createSerializerTable(registry)).toThrow(/id 256/);
    expect(() => createSerializerTable(registry, ['nope'])).toThrow(/nope/);
  });

  it('registers the built-ins in the process-wide registry', async () => {
    const { builtinExtensions } = await import('../app/builtin-extensions.js');
    expect(builtinExtensions.names('serializer')).toEqual(expect.arrayContaining(['json', 'msgpack', 'v8']));
  });
});

/** JSON-like values plus dates, bigints, maps, sets, byte arrays and undefined. */
function valueArbitrary(withNegativeZero: boolean): fc.Arbitrary<unknown> {
  const key = fc.oneof(fc.constantFrom('$t', 'v', 'a', 'toString'), fc.string({ maxLength: 6 })).filter(
    (k) => k !== '__proto__' && k !== 'constructor', // constructor: fools toStrictEqual's type check
  );
  const double = fc.double().filter((d) => withNegativeZero || !Object.is(d, -0));
  const leaf = fc.oneof(
    fc.string({ maxLength: 8 }),
    double,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt({ min: -(2n ** 100n), max: 2n ** 100n }),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 8 }).map((bytes) => Buffer.from(bytes)),
    fc.uint8Array({ maxLength: 8 }),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
      fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 }).map((entries) => new Map(entries)),
      fc.array(tie('value'), { maxLength: 3 }).map((items) => new Set(items)),
    ),
  }));
  return value;
}

function malformedInputs(serializer: Serializer): Uint8Array[] {
  const common = [Buffer.alloc(0)];
  switch (serializer.name) {
    case 'json':
      return [
        ...common,
        Buffer.from([0xc1]),
        Buffer.from('{"a":'),
        Buffer.from('nope'),
        Buffer.from('{"a":1}}'),
        Buffer.from([0xff, 0xfe]),
      ];
    case 'msgpack':
      // truncated map / string / array, unknown extension, trailing bytes
      return [
        ...common,
        Buffer.from([0x82, 0xa1, 0x61]),
        Buffer.from([0xa5, 0x68]),
        Buffer.from([0xdc, 0xff, 0xff]),
        Buffer.from([0xd4, 0x51, 0x00]),
        Buffer.from([0x01, 0x02]),
      ];
    default:
      return [
        ...common,
        Buffer.from([0xc1]),
        Buffer.from([0xff, 0x0f, 0x6f]),
        Buffer.from('hello'),
        Buffer.from([0xff, 0x0f]),
      ];
  }
}
