/**
 * hessian2 against Caucho's Hessian 4 (Debian's libhessian-java) on the JDK, for every row of the type
 * mapping in docs/serialization.md: what Callisto encodes, Java decodes with Hessian2Input into the Java
 * types the table names (HessianPeer prints each value with its type) and encodes again with
 * Hessian2Output, and Callisto decodes that back into the JS value; what Java builds, Callisto decodes
 * into the JS values the table names and encodes so that Java reads the same thing again.
 * Skipped, saying why, only when javac/java or hessian.jar is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHessian2Serializer } from '../../src/serialization/hessian2.js';
import { javaClassOf, javaEnum, withJavaClass } from '../../src/serialization/hessian2-java.js';
import {
  type JavaPeer,
  javaBytesHash,
  javaPeerMissing,
  javaStringHash,
  startJavaPeer,
} from './support/java-peer.js';

const hessian = createHessian2Serializer();
const missing = javaPeerMissing();
if (missing !== undefined) console.warn(`[hessian2] skipping the Java interop tests: ${missing}`);

/** How HessianPeer prints a string. */
function jString(text: string): string {
  if (text.length > 64) return `String("${text.length} units, hash ${javaStringHash(text)}")`;
  let out = '';
  for (const char of text) {
    for (let i = 0; i < char.length; i++) {
      const unit = char.charCodeAt(i);
      out +=
        unit >= 0x20 && unit < 0x7f && char !== '"' && char !== '\\'
          ? char
          : `\\u${unit.toString(16).padStart(4, '0')}`;
    }
  }
  return `String("${out}")`;
}

/** How HessianPeer prints a byte[]. */
function jBytes(bytes: Uint8Array): string {
  const head = bytes.length > 8 ? `hash ${javaBytesHash(bytes)}` : Buffer.from(bytes).toString('hex');
  return `byte[${bytes.length}](${head})`;
}

const list = (...items: string[]): string => `java.util.ArrayList[${items.join(', ')}]`;

function user(fields: Record<string, unknown>): Record<string, unknown> {
  return withJavaClass('com.example.User', fields);
}

const ANN = (): Record<string, unknown> =>
  user({
    id: 7,
    name: 'Ann',
    balance: 9007199254740993n,
    born: new Date(86_400_000),
    tags: ['a'],
    color: javaEnum('com.example.Color', 'GREEN'),
  });
const ANN_JAVA =
  'com.example.User{id=Integer(7), name=String("Ann"), balance=Long(9007199254740993), born=Date(86400000), tags=java.util.ArrayList[String("a")], color=com.example.Color.GREEN}';

class Account {
  constructor(
    readonly name: string,
    readonly id: number,
  ) {}
}

interface Row {
  name: string;
  value: () => unknown;
  /** What HessianPeer prints for what Java decoded. */
  java: string;
  /** What Callisto decodes from Java's re-encoding, when not `value()` itself. */
  back?: () => unknown;
  /** Extra checks on what came back (Java class names, identity). */
  check?: (back: unknown) => void;
}

const ints = [
  0,
  -16,
  47,
  -17,
  48,
  -2048,
  2047,
  -2049,
  2048,
  -262144,
  262143,
  -262145,
  262144,
  -(2 ** 31),
  2 ** 31 - 1,
];
const doubles = [
  1.5,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  0.001,
  1e300,
  5e-324,
  Number.NaN,
  Infinity,
  -Infinity,
];
const doublesJava = [
  '1.5',
  '2.147483648E9',
  '-2.147483649E9',
  '9.007199254740992E15',
  '0.001',
  '1.0E300',
  '4.9E-324',
  'NaN',
  'Infinity',
  '-Infinity',
];
const longs = [
  0n,
  -8n,
  15n,
  -9n,
  16n,
  -2048n,
  2047n,
  -262145n,
  262144n,
  -(2n ** 31n),
  2n ** 31n,
  2n ** 63n - 1n,
  -(2n ** 63n),
  9007199254740993n,
];
const strings = [
  '',
  'a',
  'x'.repeat(31),
  'x'.repeat(32),
  'x'.repeat(1023),
  'x'.repeat(1024),
  'héllo wörld',
  '中文',
  '😀',
  'a😀b',
  '\ud800',
  '\udc00x',
  `${'x'.repeat(32767)}😀${'y'.repeat(40000)}`,
];
const binaries = [0, 3, 15, 16, 1023, 1024, 70_000].map((n) =>
  Buffer.from(Array.from({ length: n }, (_, i) => i & 0xff)),
);
const dates = [0, 1234567, 300_000, -31_536_000_000, 8.64e15, -8.64e15].map((ms) => new Date(ms));

const rows: Row[] = [
  { name: 'null', value: () => null, java: 'null' },
  { name: 'undefined (as null)', value: () => [undefined], java: list('null'), back: () => [null] },
  { name: 'booleans', value: () => [true, false], java: list('Boolean(true)', 'Boolean(false)') },
  {
    name: 'int32 numbers, every compact form',
    value: () => ints,
    java: list(...ints.map((n) => `Integer(${n})`)),
  },
  {
    name: 'other numbers as doubles',
    value: () => doubles,
    java: list(...doublesJava.map((text) => `Double(${text})`)),
  },
  { name: '-0 as a double', value: () => [-0], java: list('Double(-0.0)'), back: () => [0] },
  {
    name: 'bigints as longs, every compact form',
    value: () => longs,
    java: list(...longs.map((n) => `Long(${n})`)),
  },
  {
    name: 'strings: compact, chunked, non-BMP, lone surrogates',
    value: () => strings,
    java: list(...strings.map(jString)),
  },
  { name: 'binary (Buffer)', value: () => binaries, java: list(...binaries.map(jBytes)) },
  {
    name: 'binary (Uint8Array, ArrayBuffer) decodes as a Buffer',
    value: () => [new Uint8Array([1, 2]), new Uint8Array([3]).buffer],
    java: list('byte[2](0102)', 'byte[1](03)'),
    back: () => [Buffer.from([1, 2]), Buffer.from([3])],
  },
  {
    name: 'dates (ms and minute forms)',
    value: () => dates,
    java: list(...dates.map((d) => `Date(${d.getTime()})`)),
  },
  {
    name: 'arrays as untyped lists',
    value: () => [[], [1, 'a', [2]], Array.from({ length: 9 }, (_, i) => i)],
    java: list(
      list(),
      list('Integer(1)', 'String("a")', list('Integer(2)')),
      list(...Array.from({ length: 9 }, (_, i) => `Integer(${i})`)),
    ),
  },
  {
    name: 'typed lists: Java arrays and collections',
    value: () => [
      withJavaClass('[int', [1, 2, 3]),
      withJavaClass('[string', ['a', 'b']),
      withJavaClass('[long', [5n, 6]),
      withJavaClass('[double', [0.5, 2]),
      withJavaClass('[object', [1, 'two']),
      withJavaClass(
        'java.util.LinkedList',
        Array.from({ length: 9 }, (_, i) => i),
      ),
      withJavaClass('java.util.HashSet', ['s']),
      withJavaClass('[com.example.User', [user({ id: 1 })]),
    ],
    java: list(
      'int[](Integer(1), Integer(2), Integer(3))',
      'java.lang.String[](String("a"), String("b"))',
      'long[](Long(5), Long(6))',
      'double[](Double(0.5), Double(2.0))',
      'java.lang.Object[](Integer(1), String("two"))',
      `java.util.LinkedList[${Array.from({ length: 9 }, (_, i) => `Integer(${i})`).join(', ')}]`,
      'java.util.HashSet[String("s")]',
      'com.example.User[](com.example.User{id=Integer(1), name=null, balance=Long(0), born=null, tags=null, color=null})',
    ),
    back: () => [
      withJavaClass('[int', [1, 2, 3]),
      withJavaClass('[string', ['a', 'b']),
      withJavaClass('[long', [5n, 6n]),
      withJavaClass('[double', [0.5, 2]),
      withJavaClass('[object', [1, 'two']),
      withJavaClass(
        'java.util.LinkedList',
        Array.from({ length: 9 }, (_, i) => i),
      ),
      withJavaClass('java.util.HashSet', ['s']),
      withJavaClass('[com.example.User', [
        user({ id: 1, name: null, balance: 0n, born: null, tags: null, color: null }),
      ]),
    ],
    check: (back) => {
      const names = (back as unknown[]).map(javaClassOf);
      expect(names).toEqual([
        '[int',
        '[string',
        '[long',
        '[double',
        '[object',
        'java.util.LinkedList',
        'java.util.HashSet',
        '[com.example.User',
      ]);
    },
  },
  {
    name: 'a plain object as a HashMap',
    value: () => ({ a: 1, b: 'x' }),
    java: 'java.util.HashMap{String("a")=Integer(1), String("b")=String("x")}',
  },
  {
    name: 'a Map with other keys as a HashMap',
    value: () =>
      new Map<unknown, unknown>([
        [1, 'one'],
        [2n, 'two'],
      ]),
    java: 'java.util.HashMap{Integer(1)=String("one"), Long(2)=String("two")}',
  },
  {
    name: 'a Map with string keys comes back as an object',
    value: () => new Map([['k', 'v']]),
    java: 'java.util.HashMap{String("k")=String("v")}',
    back: () => ({ k: 'v' }),
  },
  {
    name: 'typed maps',
    value: () => [
      withJavaClass(
        'java.util.TreeMap',
        new Map<unknown, unknown>([
          ['b', 2],
          ['a', 1],
        ]),
      ),
      withJavaClass('java.util.LinkedHashMap', new Map<unknown, unknown>([['z', true]])),
    ],
    java: list(
      'java.util.TreeMap{String("a")=Integer(1), String("b")=Integer(2)}',
      'java.util.LinkedHashMap{String("z")=Boolean(true)}',
    ),
    back: () => [
      withJavaClass(
        'java.util.TreeMap',
        new Map<unknown, unknown>([
          ['a', 1],
          ['b', 2],
        ]),
      ),
      withJavaClass('java.util.LinkedHashMap', new Map<unknown, unknown>([['z', true]])),
    ],
    check: (back) =>
      expect((back as unknown[]).map(javaClassOf)).toEqual(['java.util.TreeMap', 'java.util.LinkedHashMap']),
  },
  {
    name: 'a typed object as its Java class (every field type)',
    value: ANN,
    java: ANN_JAVA,
    check: (back) => {
      expect(javaClassOf(back)).toBe('com.example.User');
      expect(javaClassOf((back as { color: unknown }).color)).toBe('com.example.Color');
    },
  },
  {
    name: 'a typed object: missing fields take Java defaults, a number fills a long field',
    value: () => user({ id: 1, balance: 5 }),
    java: 'com.example.User{id=Integer(1), name=null, balance=Long(5), born=null, tags=null, color=null}',
    back: () => user({ id: 1, name: null, balance: 5n, born: null, tags: null, color: null }),
  },
  {
    name: 'class instances: a HashMap, or the Java class they are given',
    value: () => [new Account('a-1', 5), withJavaClass('com.example.User', new Account('Bo', 3))],
    java: list(
      'java.util.HashMap{String("name")=String("a-1"), String("id")=Integer(5)}',
      'com.example.User{id=Integer(3), name=String("Bo"), balance=Long(0), born=null, tags=null, color=null}',
    ),
    back: () => [
      { name: 'a-1', id: 5 },
      user({ id: 3, name: 'Bo', balance: 0n, born: null, tags: null, color: null }),
    ],
  },
  {
    name: 'a typed object of a class Java does not have reads as a HashMap',
    value: () => withJavaClass('com.example.Missing', { a: 1 }),
    java: 'java.util.HashMap{String("a")=Integer(1)}',
    back: () => ({ a: 1 }),
  },
  {
    name: 'enums',
    value: () => [javaEnum('com.example.Color', 'RED'), javaEnum('com.example.Color', 'BLUE')],
    java: list('com.example.Color.RED', 'com.example.Color.BLUE'),
    check: (back) => expect(javaClassOf((back as unknown[])[1])).toBe('com.example.Color'),
  },
  {
    name: 'shared references stay shared',
    value: () => {
      const inner = [1];
      const person = ANN();
      // a Map and a typed list first: every list, map and object takes a reference number
      return [new Map([[1, 'x']]), withJavaClass('[int', [1]), inner, inner, person, person];
    },
    java: list(
      'java.util.HashMap{Integer(1)=String("x")}',
      'int[](Integer(1))',
      list('Integer(1)'),
      '#ref',
      ANN_JAVA,
      '#ref',
    ),
    check: (back) => {
      const [, , a, b, c, d] = back as unknown[];
      expect(a).toBe(b);
      expect(c).toBe(d);
    },
  },
  {
    name: 'cycles (an object, a map)',
    value: () => {
      const node = withJavaClass('com.example.Node', { name: 'loop', next: null as unknown });
      node.next = node;
      const map: Record<string, unknown> = {};
      map.self = map;
      return [node, map];
    },
    java: list('com.example.Node{name=String("loop"), next=#ref}', 'java.util.HashMap{String("self")=#ref}'),
    check: (back) => {
      const [node, map] = back as [{ next: unknown }, { self: unknown }];
      expect(node.next).toBe(node);
      expect(map.self).toBe(map);
    },
  },
];

interface Sample {
  sample: string;
  /** What Callisto decodes from what Java built. */
  js: unknown;
  /** What HessianPeer prints for Callisto's re-encoding, when it differs from what Java built. */
  again?: string;
  check?: (value: unknown) => void;
}

const samples: Sample[] = [
  { sample: 'null', js: null },
  { sample: 'booleans', js: [true, false] },
  { sample: 'int-forms', js: [0, -16, 47, -2048, 2047, -262144, 262143, -(2 ** 31), 2 ** 31 - 1] },
  {
    sample: 'long-forms',
    js: [
      0n,
      -8n,
      15n,
      -2048n,
      2047n,
      -262144n,
      262143n,
      -(2n ** 31n),
      -(2n ** 63n),
      2n ** 63n - 1n,
      9007199254740993n,
    ],
  },
  {
    sample: 'double-forms',
    // Java writes -0.0 as 0.0; a double with an integer value is a JS number like any other, so it
    // goes back to Java as an int where Java's type is Object
    js: [0, 1, -128, 127, -32768, 32767, 1.5, 0.001, 3.14158, 0, Number.NaN, Infinity, 1e300],
    again: list(
      'Integer(0)',
      'Integer(1)',
      'Integer(-128)',
      'Integer(127)',
      'Integer(-32768)',
      'Integer(32767)',
      'Double(1.5)',
      'Double(0.001)',
      'Double(3.14158)',
      'Integer(0)',
      'Double(NaN)',
      'Double(Infinity)',
      'Double(1.0E300)',
    ),
  },
  {
    sample: 'narrow-numbers',
    js: [-3, 7, 1.25, 'x'],
    again: list('Integer(-3)', 'Integer(7)', 'Double(1.25)', 'String("x")'),
  },
  {
    sample: 'strings',
    js: ['', 'héllo', '😀 non-BMP', '\ud800 lone', `${'x'.repeat(32767)}😀${'y'.repeat(40000)}`],
  },
  {
    sample: 'binary',
    js: [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.alloc(500),
      Buffer.from(Array.from({ length: 70000 }, (_, i) => i & 0xff)),
    ],
  },
  { sample: 'dates', js: [0, 1234567, 300000, -86400000 * 365].map((ms) => new Date(ms)) },
  {
    sample: 'arrays',
    js: [[1, 2, 3], ['a', 'b'], [5n], [0.5], [1, 'two']],
    check: (value) =>
      expect((value as unknown[]).map(javaClassOf)).toEqual([
        '[int',
        '[string',
        '[long',
        '[double',
        '[object',
      ]),
  },
  {
    sample: 'collections',
    js: [
      [1, 'x'],
      [1, 2],
      ['a', 'b'],
    ],
    check: (value) =>
      expect((value as unknown[]).map(javaClassOf)).toEqual([
        undefined,
        'java.util.LinkedList',
        'java.util.LinkedHashSet',
      ]),
  },
  {
    sample: 'maps',
    js: [{ a: 1 }, new Map([[1, 'one']]), new Map([['k', 'v']]), new Map([['z', true]])],
    check: (value) =>
      expect((value as unknown[]).map(javaClassOf)).toEqual([
        undefined,
        undefined,
        'java.util.TreeMap',
        'java.util.LinkedHashMap',
      ]),
  },
  { sample: 'user', js: ANN(), check: (value) => expect(javaClassOf(value)).toBe('com.example.User') },
  {
    sample: 'enum',
    js: { name: 'BLUE' },
    check: (value) => expect(javaClassOf(value)).toBe('com.example.Color'),
  },
  {
    sample: 'shared',
    js: [[1], [1]],
    check: (value) => expect((value as unknown[])[0]).toBe((value as unknown[])[1]),
  },
  {
    sample: 'cycle',
    js: expect.objectContaining({ name: 'loop' }),
    check: (value) => expect((value as { next: unknown }).next).toBe(value),
  },
];

describe.skipIf(missing !== undefined)('hessian2 against Caucho Hessian 4 on the JDK', () => {
  let peer: JavaPeer;
  beforeAll(() => {
    peer = startJavaPeer();
  }, 180_000);
  afterAll(async () => {
    await peer?.close();
  });

  it.each(rows)('JS → Java → JS: $name', async (row) => {
    const answer = await peer.roundTrip(hessian.encode(row.value()));
    expect(answer.description).toBe(row.java);
    const back = hessian.decode(answer.bytes);
    expect(back).toEqual(row.back?.() ?? row.value());
    row.check?.(back);
  });

  it.each(samples)('Java → JS → Java: $sample', async ({ sample, js, again, check }) => {
    const made = await peer.make(sample);
    const value = hessian.decode(made.bytes);
    expect(value).toEqual(js);
    check?.(value);
    const answer = await peer.roundTrip(hessian.encode(value));
    expect(answer.description).toBe(again ?? made.description);
  });

  it('Java reads every request body of a call as its argument list', async () => {
    // what a consumer sends for users.save(ann, 5n, 'note'): the arguments, one untyped list
    const answer = await peer.roundTrip(hessian.encode([ANN(), 5n, 'note']));
    expect(answer.description).toBe(list(ANN_JAVA, 'Long(5)', 'String("note")'));
  });
});
