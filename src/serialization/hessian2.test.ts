import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeLimitError, MAX_DECODE_DEPTH } from './decode-limits.js';
import { createHessian2Serializer } from './hessian2.js';
import { decodeHessian2 } from './hessian2-decoder.js';
import { javaClassOf, javaEnum, withJavaClass } from './hessian2-java.js';
import { measureHessian2 } from './hessian2-scan.js';

const hessian = createHessian2Serializer();
const bytes = (...parts: Array<number | string | number[]>): Buffer =>
  Buffer.concat(
    parts.map((part) =>
      typeof part === 'number'
        ? Buffer.from([part])
        : typeof part === 'string'
          ? Buffer.from(part, 'latin1')
          : Buffer.from(part),
    ),
  );

/** What a receiver does with a body: scan, then decode. */
function receive(body: Uint8Array, maxElements = 1_000_000): unknown {
  hessian.measure!(body, maxElements);
  return hessian.decode(body);
}

describe('hessian2 codec', () => {
  it('round-trips the mapping (Java-side checks: test/hessian2/java-interop.test.ts)', () => {
    const user = withJavaClass('com.example.User', {
      id: 1,
      name: 'Ann',
      color: javaEnum('com.example.Color', 'RED'),
    });
    const value = [
      null,
      true,
      5,
      1.5,
      2 ** 40,
      -0,
      9n,
      'a😀\ud800',
      Buffer.from([1]),
      new Date(5),
      { a: 1 },
      new Map([[1, 2]]),
      user,
      user,
    ];
    const back = receive(hessian.encode(value)) as unknown[];
    expect(back).toEqual(value);
    expect(back[12]).toBe(back[13]);
    expect(javaClassOf(back[12])).toBe('com.example.User');
    expect(Object.keys(back[12] as object)).toEqual(['id', 'name', 'color']); // the class name is not a key
    expect(JSON.stringify(back[12])).toBe('{"id":1,"name":"Ann","color":{"name":"RED"}}');
  });

  it('writes a class instance field by field: a map, or the Java class it is given', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
      get length(): number {
        return Math.hypot(this.x, this.y);
      }
    }
    expect(receive(hessian.encode(new Point(1, 2)))).toEqual({ x: 1, y: 2 });
    const typed = receive(hessian.encode(withJavaClass('com.example.Point', new Point(3, 4))));
    expect(typed).toEqual({ x: 3, y: 4 });
    expect(javaClassOf(typed)).toBe('com.example.Point');
  });

  it('decodes a long as a bigint and a number never as a long', () => {
    expect(receive(hessian.encode(5n))).toBe(5n);
    expect(receive(hessian.encode(2 ** 53 + 2))).toBe(2 ** 53 + 2);
    expect(hessian.encode(2 ** 40)[0]).toBe(0x44); // a double
    expect(receive(bytes(0x4c, [0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toBe(2n ** 63n - 1n);
  });

  it('refuses what it cannot carry, naming it', () => {
    expect(() => hessian.encode(() => 1)).toThrow(/cannot carry a function/);
    expect(() => hessian.encode(Symbol('s'))).toThrow(/cannot carry a symbol/);
    expect(() => hessian.encode(new Set([1]))).toThrow(/cannot carry a Set.*java\.util\.HashSet/);
    expect(() => hessian.encode(new Float64Array(1))).toThrow(/not a Float64Array/);
    expect(() => hessian.encode(/x/)).toThrow(/cannot carry a RegExp/);
    expect(() => hessian.encode(new Error('x'))).toThrow(/cannot carry a Error/);
    expect(() => hessian.encode(2n ** 63n)).toThrow(/outside the 64-bit range/);
    expect(() => hessian.encode(new Date(Number.NaN))).toThrow(/invalid Date/);
    let deep: unknown = [];
    for (let i = 0; i < MAX_DECODE_DEPTH + 1; i++) deep = [deep];
    expect(() => hessian.encode(deep)).toThrow(/deeper than 1000/);
    expect(() => withJavaClass('x.Y', new Set())).toThrow(TypeError);
    expect(() => withJavaClass('x.Y', new Date())).toThrow(TypeError);
    expect(() => withJavaClass('', {})).toThrow(TypeError);
  });

  it('gives no decoded object an own __proto__ key', () => {
    // H "__proto__" H "admin" T Z Z: an untyped map with a __proto__ key is a Map
    const body = bytes(0x48, 0x09, '__proto__', 0x48, 0x05, 'admin', 0x54, 0x5a, 0x5a);
    const value = receive(body);
    expect(value).toBeInstanceOf(Map);
    expect((value as Map<string, unknown>).get('__proto__')).toEqual({ admin: true });
    expect(({} as { admin?: unknown }).admin).toBeUndefined();
    // a class with a field named __proto__ is refused
    expect(() => receive(bytes(0x43, 0x01, 'X', 0x91, 0x09, '__proto__', 0x60, 0x4e))).toThrow(/__proto__/);
  });

  it('reads the forms Java writes that Callisto does not: variable lists, mills, chunks, 4-byte UTF-8', () => {
    expect(receive(bytes(0x57, 0x91, 0x92, 0x5a))).toEqual([1, 2]);
    expect(receive(bytes(0x55, 0x04, '[int', 0x91, 0x5a))).toEqual([1]);
    expect(receive(bytes(0x5f, [0, 0, 0x05, 0xdc]))).toBe(1.5);
    expect(receive(bytes(0x52, [0, 1], 'a', 0x01, 'b'))).toBe('ab');
    expect(receive(bytes(0x41, [0, 1], [7], 0x21, [8]))).toEqual(Buffer.from([7, 8]));
    expect(receive(bytes(0x02, [0xf0, 0x9f, 0x98, 0x80]))).toBe('😀');
  });
});

describe('hessian2 decode limits (each refused before anything is built)', () => {
  it('counts elements: a body over maxDecodedElements is refused by the scan', () => {
    // [ [] x 10,000 ]: 10,001 elements in 10,004 bytes
    const body = bytes(0x58, 0xd4, [0x27, 0x10], Array(10_000).fill(0x78));
    expect(measureHessian2(body, 20_000)).toBe(10_001);
    expect(() => measureHessian2(body, 10_000)).toThrow(/more than 10000 elements \(maxDecodedElements\)/);
  });

  it('counts a reference as the value it shares: a small body cannot describe a huge value', () => {
    // [L0, L1, ..., L43] where L0 = [1, 1] and Li = [Q L(i-1), Q L(i-1)] (L(i-1) is reference #i):
    // under 400 bytes, 2^44 paths
    const items: number[] = [0x58, 0xbc, 0x7a, 0x91, 0x91];
    for (let level = 1; level < 44; level++)
      items.push(0x7a, 0x51, ...intBytes(level), 0x51, ...intBytes(level));
    const shared = Buffer.from(items);
    expect(shared.length).toBeLessThan(400);
    expect(() => measureHessian2(shared, 1_000_000)).toThrow(/maxDecodedElements/);
    // decoding it would be cheap (everything shared): the limit is on the value as a tree
    expect(() => decodeHessian2(shared)).not.toThrow();
    // a reference to a container still open (a cycle) counts 1
    expect(measureHessian2(bytes(0x79, 0x51, 0x90), 10)).toBe(2);
  });

  it('refuses nesting deeper than 1000, in the scan and in the decoder', () => {
    const deep = Buffer.concat([Buffer.alloc(5000, 0x79), Buffer.from([0x4e])]);
    expect(() => measureHessian2(deep, 1e9)).toThrow(/deeper than 1000 levels/);
    expect(() => decodeHessian2(deep)).toThrow(/deeper than 1000 levels/);
    const maps = Buffer.concat([Buffer.alloc(5000, 0x48), Buffer.alloc(5000, 0x5a)]);
    expect(() => measureHessian2(maps, 1e9)).toThrow(/deeper than 1000 levels/);
  });

  it('checks every claimed length and count against the bytes left', () => {
    const claims: Array<[string, Buffer, RegExp]> = [
      [
        'a list',
        bytes(0x58, 0x49, [0x7f, 0xff, 0xff, 0xff], 0x91),
        /a list claims 2147483647 elements, 1 bytes left/,
      ],
      ['a negative list', bytes(0x58, 0x49, [0xff, 0xff, 0xff, 0xff]), /a list claims -1 elements/],
      ['a string', bytes(0x53, [0xff, 0xff], 'abc'), /claims 65535 characters, 3 bytes left/],
      ['a short string', bytes(0x1f, 'ab'), /claims 31 characters, 2 bytes left/],
      ['a binary', bytes(0x42, [0xff, 0xff], [1, 2, 3]), /65535 bytes needed, 3 left/],
      [
        'a class definition',
        bytes(0x43, 0x01, 'X', 0x49, [0x7f, 0xff, 0xff, 0xff]),
        /class definition claims 2147483647 elements/,
      ],
    ];
    for (const [what, body, message] of claims) {
      expect(() => measureHessian2(body, 1e9), what).toThrow(message);
      expect(() => decodeHessian2(body), what).toThrow(/malformed hessian2/);
    }
    // a truncated binary is never decoded short
    expect(() => decodeHessian2(bytes(0x23, [1, 2]))).toThrow(/3 bytes needed, 2 left/);
  });

  it('checks references, types and classes against their tables', () => {
    const tables: Array<[Buffer, RegExp]> = [
      [bytes(0x51, 0x49, [0x7f, 0xff, 0xff, 0xff]), /reference #2147483647 refers past the 0 values/],
      [bytes(0x79, 0x51, 0x91), /reference #1 refers past the 1 values/],
      [bytes(0x71, 0x95, 0x91), /type #5 refers past the 0 types/],
      [bytes(0x4f, 0x49, [0x7f, 0xff, 0xff, 0xff]), /class #2147483647, past the 0 classes/],
      [bytes(0x63), /class #3, past the 0 classes/],
    ];
    for (const [body, message] of tables) {
      expect(() => measureHessian2(body, 1e9)).toThrow(message);
      expect(() => decodeHessian2(body)).toThrow(message);
    }
  });

  it('refuses bytes after the value and bytes no production starts with', () => {
    expect(() => receive(bytes(0x91, 0x91))).toThrow(/1 bytes after the value/);
    expect(() => receive(bytes(0x40))).toThrow(/unexpected byte 0x40/);
    expect(() => receive(bytes(0x5a))).toThrow(/unexpected byte 0x5a/);
  });

  it('an empty body is no value (an answer of undefined)', () => {
    expect(measureHessian2(Buffer.alloc(0), 10)).toBe(0);
  });

  it('fuzz: any bytes are decoded or refused with DecodeLimitError/TypeError, never anything else', () => {
    const sample = hessian.encode([
      withJavaClass('com.example.User', { id: 1, tags: withJavaClass('[string', ['a']) }),
      new Map([[1n, 'x'.repeat(40)]]),
      { a: [1.5, new Date(60_000)] },
      Buffer.alloc(20, 1),
    ]);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc
            .array(fc.tuple(fc.nat(sample.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 4 })
            .map((edits) => {
              const copy = Buffer.from(sample);
              for (const [at, byte] of edits) copy[at] = byte;
              return copy;
            }),
        ),
        (body) => {
          try {
            receive(body, 10_000);
          } catch (error) {
            expect(error instanceof DecodeLimitError || error instanceof TypeError, String(error)).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('property: what the encoder writes, the scan accepts and the decoder reads back', () => {
    const leaf = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      fc.double().filter((n) => !Number.isInteger(n)),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) }),
      fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u)),
      fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, leaf, tie('list'), tie('object')),
      list: fc.array(tie('value'), { maxLength: 5 }),
      object: fc.dictionary(
        fc.string().filter((k) => k !== '__proto__'),
        tie('value'),
        { maxKeys: 4 },
      ),
    }));
    fc.assert(
      fc.property(value, (input) => {
        const body = hessian.encode(input);
        expect(measureHessian2(body, 1e9)).toBeGreaterThan(0);
        expect(hessian.decode(body)).toEqual(input);
      }),
      { numRuns: 1000 },
    );
  });
});

function intBytes(value: number): number[] {
  return value <= 47 ? [0x90 + value] : [0xc8 + (value >> 8), value & 0xff];
}
