import v8 from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkDecoded,
  DecodeLimitError,
  decodeBody,
  MAX_DECODE_DEPTH,
  measureBody,
} from './decode-limits.js';
import { createJsonSerializer } from './json.js';
import { scanJson } from './json-scan.js';
import { createMsgpackSerializer } from './msgpack.js';
import { createV8Serializer } from './v8.js';

const msgpack = createMsgpackSerializer();
const json = createJsonSerializer();
const limits = { maxElements: 1_000_000 };

/** Values as msgpack and json decode them: every element of a JSON-like value, keys included. */
function jsonElements(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 1;
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, item) => sum + jsonElements(item), 0);
  return 1 + Object.values(value).reduce((sum: number, item) => sum + 1 + jsonElements(item), 0);
}

describe('msgpack measure', () => {
  it('counts exactly what a JSON-like value decodes into', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const bytes = msgpack.encode(value);
        expect(msgpack.measure!(bytes, 1e9)).toBe(jsonElements(msgpack.decode(bytes)));
      }),
      { numRuns: 500 },
    );
  });

  it('accepts everything the msgpack serializer writes, and never counts more elements than bytes', () => {
    const values = [
      undefined,
      -0,
      2n ** 70n,
      -(2n ** 64n),
      new Date(5),
      new Map<unknown, unknown>([[1, { a: [new Set([1])] }]]),
      new Set(['a', new Map()]),
      Buffer.alloc(70_000),
      new Float64Array(9),
      /a+b/gi,
      new Error('x', { cause: new TypeError('y') }),
      { nested: [[[[{ deep: true }]]]] },
    ];
    for (const value of values) {
      const bytes = msgpack.encode([value]);
      const elements = msgpack.measure!(bytes, 1e9);
      expect(elements).toBeLessThanOrEqual(bytes.length);
      msgpack.decode(bytes);
    }
  });

  it('counts every header form, including those the encoder never writes (fixmap, 32-bit sizes)', () => {
    const str = (n: number) => 'x'.repeat(n);
    const cases: Array<[string, number[], number]> = [
      ['fixmap {a: 1}', [0x81, 0xa1, 0x61, 0x01], 3],
      ['fixarray [nil, true]', [0x92, 0xc0, 0xc3], 3],
      ['map16 {a: -1}', [0xde, 0, 1, 0xa1, 0x61, 0xff], 3],
      ['map32 {}', [0xdf, 0, 0, 0, 0], 1],
      ['array16 [1]', [0xdc, 0, 1, 1], 2],
      ['array32 [1, 2]', [0xdd, 0, 0, 0, 2, 1, 2], 3],
      ['str8', [0xd9, 3, ...Buffer.from(str(3))], 1],
      ['str16', [0xda, 0, 3, ...Buffer.from(str(3))], 1],
      ['str32', [0xdb, 0, 0, 0, 3, ...Buffer.from(str(3))], 1],
      ['bin8/16/32 in an array (2 each)', [0x93, 0xc4, 1, 9, 0xc5, 0, 1, 9, 0xc6, 0, 0, 0, 1, 9], 7],
      [
        'numbers',
        [
          0x96, 0xcc, 1, 0xcd, 0, 1, 0xce, 0, 0, 0, 1, 0xd0, 1, 0xca, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0,
          0,
        ],
        7,
      ],
      ['Set as ext8 (3) followed by its array', [0xc7, 0, 0x73, 0x91, 0x01], 5],
      ['Date as fixext8 (3)', [0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0], 3],
      ['Map as fixext1 (3) followed by its entries', [0xd4, 0x4d, 0x00, 0x92, 0x01, 0x02], 6],
    ];
    for (const [name, bytes, elements] of cases) {
      expect(msgpack.measure!(Buffer.from(bytes), 1e9), name).toBe(elements);
      expect(() => msgpack.decode(Buffer.from(bytes)), name).not.toThrow();
    }
  });

  it('refuses every truncation, trailing bytes, and extensions msgpack never writes', () => {
    const bytes = msgpack.encode([{ a: [1, 'two', new Map([[3, new Date(4)]])] }, 5n, Buffer.from('x')]);
    for (let end = 0; end < bytes.length; end++) {
      expect(() => msgpack.measure!(bytes.subarray(0, end), 1e9), `prefix of ${end}`).toThrow(
        DecodeLimitError,
      );
    }
    expect(() => msgpack.measure!(Buffer.from([0x01, 0x02]), 1e9)).toThrow(/after the value/);
    expect(() => msgpack.measure!(Buffer.from([0xd4, 0x72, 0x40, 0x90]), 1e9)).toThrow(/extension type 114/); // records
    expect(() => msgpack.measure!(Buffer.from([0xc1]), 1e9)).toThrow(/malformed/);
  });

  it('refuses more elements than allowed and deeper nesting, before allocating', () => {
    const maps = Buffer.alloc(5 + 100_000, 0x80);
    maps[0] = 0xdd;
    maps.writeUInt32BE(100_000, 1);
    expect(msgpack.measure!(maps, 100_001)).toBe(100_001);
    expect(() => msgpack.measure!(maps, 100_000)).toThrow(/more than 100000 elements \(maxDecodedElements\)/);
    const deep = Buffer.alloc(MAX_DECODE_DEPTH + 2, 0x91);
    deep[deep.length - 1] = 0x01;
    expect(() => msgpack.measure!(deep, 1e9)).toThrow(/deeper than 1000/);
    // a container claiming more elements than bytes remain
    expect(() => msgpack.measure!(Buffer.from([0xdd, 0x10, 0, 0, 0, 1]), 1e9)).toThrow(/runs past the end/);
  });
});

describe('json measure', () => {
  it('counts exactly what JSON.parse builds', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = Buffer.from(JSON.stringify(value));
        expect(scanJson(text, 1e9)).toBe(jsonElements(JSON.parse(text.toString())));
      }),
      { numRuns: 500 },
    );
  });

  it('skips strings with escaped quotes and brackets', () => {
    const text = Buffer.from(JSON.stringify(['a"[{,:', { 'k\\"': 'v\\\\' }, '\\']));
    expect(scanJson(text, 1e9)).toBe(6);
  });

  it('refuses more elements than allowed and deeper nesting', () => {
    const many = Buffer.from(`[${Array(1000).fill('{}').join(',')}]`);
    expect(scanJson(many, 1001)).toBe(1001);
    expect(() => scanJson(many, 1000)).toThrow(DecodeLimitError);
    expect(() => scanJson(Buffer.from('['.repeat(1001) + ']'.repeat(1001)), 1e9)).toThrow(/deeper/);
  });
});

describe('measureBody and decodeBody', () => {
  it('counts small bodies by their length without scanning, larger ones by scanning', () => {
    const small = msgpack.encode([1, 2, 3]);
    expect(measureBody(msgpack, small, limits)).toBe(small.length);
    const large = msgpack.encode(['x'.repeat(10_000)]);
    expect(measureBody(msgpack, large, limits)).toBe(2);
    // a cap below the scan threshold makes small bodies scanned too
    expect(() => measureBody(json, Buffer.from('[1,2,3,4]'), { maxElements: 3 })).toThrow(DecodeLimitError);
  });

  it('walks what a serializer without measure decodes: v8 may not hand out an own __proto__', () => {
    const serializer = createV8Serializer();
    const hostile = v8.serialize([JSON.parse('{"__proto__": {"polluted": true}}')]);
    expect(() => decodeBody(serializer, hostile, limits)).toThrow(/__proto__/);
    expect(decodeBody(serializer, serializer.encode([{ a: new Map([[1, [2]]]) }]), limits)).toEqual([
      { a: new Map([[1, [2]]]) },
    ]);
  });
});

describe('checkDecoded', () => {
  it('refuses more elements than allowed, deep nesting and own __proto__ keys; cuts cycles', () => {
    expect(() =>
      checkDecoded(
        Array.from({ length: 11 }, () => 0),
        { maxElements: 10 },
      ),
    ).toThrow(/more than 10/);
    let deep: unknown = 1;
    for (let i = 0; i < MAX_DECODE_DEPTH + 1; i++) deep = [deep];
    expect(() => checkDecoded(deep, limits)).toThrow(/deeper/);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => checkDecoded(cyclic, { maxElements: 100 })).toThrow(DecodeLimitError);
    expect(() => checkDecoded(new Set([JSON.parse('{"__proto__": 1}')]), limits)).toThrow(/__proto__/);
    expect(() => checkDecoded({ a: [new Date(), Buffer.alloc(3)] }, limits)).not.toThrow();
  });
});

describe('msgpack decode of Error values', () => {
  it('does not capture the decoder stack for each Error (heap and time), and restores the limit', () => {
    const before = Error.stackTraceLimit;
    const decoded = msgpack.decode(msgpack.encode([new Error('boom')])) as Error[];
    expect(decoded[0]!.message).toBe('boom');
    expect(decoded[0]!.stack ?? '').not.toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(before);
    expect(() => msgpack.decode(Buffer.from([0x92, 0x01]))).toThrow();
    expect(Error.stackTraceLimit).toBe(before);
  });
});
