import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { defineService } from '../index.js';
import { DecodeLimitError, measureBody } from './decode-limits.js';
import { createProtobufSerializer } from './protobuf.js';
import { createProtobufScanner } from './protobuf-scan.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const users = protobuf.loadSync(path.join(here, '../../test/http/fixtures/users.proto'));
const wide = protobuf.loadSync(path.join(here, '../../test/hostile/fixtures/wide.proto'));
const TO_OBJECT = {
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
};

/** Values a decoded message holds: every container and leaf. */
function valuesIn(value: unknown): number {
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return 1;
  return 1 + Object.values(value).reduce((sum: number, item) => sum + valuesIn(item), 0);
}

function emptyRows(rows: number): Buffer {
  const body = Buffer.alloc(rows * 2);
  for (let i = 0; i < rows; i++) body[i * 2] = 0x0a;
  return body;
}

describe('protobuf pre-scan', () => {
  it('counts at least what a message decodes into, defaults of empty sub-messages included', () => {
    const User = users.lookupType('example.User');
    const Tree = users.lookupType('example.Tree');
    const Take = wide.lookupType('hostile.TakeRequest');
    const cases: Array<[protobuf.Type, object]> = [
      [User, { id: 7, name: 'ada', tags: ['a', 'b', 'c'], labels: { x: '1', y: '2' }, balance: '12' }],
      [User, {}],
      [Tree, { label: 'r', children: [{ label: 'a', children: [{}, {}] }, {}] }],
      [Take, { rows: [{}, {}, { f1: 'x', f48: 'y' }] }],
    ];
    for (const [type, object] of cases) {
      const bytes = type.encode(type.fromObject(object)).finish();
      const decoded = valuesIn(type.toObject(type.decode(bytes), TO_OBJECT));
      const counted = createProtobufScanner(type).scan(bytes, Number.MAX_SAFE_INTEGER);
      expect(counted).toBeGreaterThanOrEqual(decoded);
      expect(counted).toBeLessThanOrEqual(2 * decoded + bytes.length);
    }
    // 1,000 empty rows: 2,000 bytes, 49,000 decoded values
    expect(
      createProtobufScanner(Take).scan(emptyRows(1_000), Number.MAX_SAFE_INTEGER),
    ).toBeGreaterThanOrEqual(49_000);
  });

  it('refuses over maxElements, past protobufjs nesting limit, and malformed lengths', () => {
    const Take = wide.lookupType('hostile.TakeRequest');
    expect(() => createProtobufScanner(Take).scan(emptyRows(1_000), 10_000)).toThrow(/maxDecodedElements/);
    const Tree = users.lookupType('example.Tree');
    let deep = Buffer.alloc(0);
    for (let i = 0; i < 101; i++) deep = Buffer.concat([Buffer.from([0x12]), varint(deep.length), deep]);
    expect(() => createProtobufScanner(Tree).scan(deep, 1_000_000)).toThrow(/deeper than 100/);
    expect(() => createProtobufScanner(Tree).scan(Buffer.from([0x12, 0x05, 0x41]), 1_000)).toThrow(
      DecodeLimitError,
    );
  });

  it('measures even a small protobuf body (measureEveryBody): 400 bytes may be 9,800 values', () => {
    const def = defineService<{ take(rows: unknown[]): Promise<number> }>('hostile.Wide', {
      methods: { take: {} },
      protobuf: wide,
    });
    const view = createProtobufSerializer().forMethod!(def, 'take', 'provider');
    expect(() => measureBody(view, emptyRows(200), { maxElements: 1_000 })).toThrow(/maxDecodedElements/);
    expect(measureBody(view, emptyRows(2), { maxElements: 1_000 })).toBeGreaterThanOrEqual(99);
  });
});

function varint(value: number): Buffer {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value >>>= 7;
  }
  out.push(value);
  return Buffer.from(out);
}
