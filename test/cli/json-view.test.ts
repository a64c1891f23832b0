/**
 * One tagged-JSON dialect (docs/values.md): what `callisto call` and the dashboard print is exactly what
 * the json serializer (the HTTP entry, the gateway) writes, and what either writes reads back the same
 * through the command line's reader — checked on arbitrary values against the serializer itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJsonSerializer } from '../../src/serialization/json.js';
import { fromView, toView, ViewError } from '../../src/tools/json-view.js';

const json = createJsonSerializer();
const written = (value: unknown): unknown => JSON.parse(Buffer.from(json.encode(value)).toString('utf8'));

/** Values the json serializer carries: every tagged type, nested, and objects that need the escape. */
const { value: anyValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.bigInt(),
    fc.date({ noInvalidDate: true }),
    fc.uint8Array({ maxLength: 8 }).map((bytes) => Buffer.from(bytes)),
    fc.float32Array({ maxLength: 4 }),
    fc.uint8Array({ maxLength: 4 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.string().filter((key) => key !== '__proto__'),
      tie('value'),
      { maxKeys: 4 },
    ),
    fc.record({ $t: fc.string(), v: tie('value') }),
    fc.array(fc.tuple(tie('value'), tie('value')), { maxLength: 3 }).map((pairs) => new Map(pairs)),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => new Set(items)),
  ),
}));

describe('the CLI and dashboard dialect', () => {
  it("prints every value exactly as the json serializer (the HTTP entry's answers) writes it", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(toView(value)).toEqual(written(value));
      }),
      { numRuns: 300 },
    );
  });

  it('reads what the HTTP entry writes into the values the serializer decodes', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const bytes = json.encode(value);
        expect(fromView(JSON.parse(Buffer.from(bytes).toString('utf8')))).toEqual(json.decode(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a Date from an ISO string, in the serializer as in the command line', () => {
    const typed = '{"$t":"D","v":"2024-05-01T12:00:00Z"}';
    expect(fromView(JSON.parse(typed))).toEqual(new Date('2024-05-01T12:00:00Z'));
    expect(json.decode(Buffer.from(typed))).toEqual(new Date('2024-05-01T12:00:00Z'));
  });

  it('prints a cycle and an Error in forms of their own, and says where a value is wrong', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(toView(cyclic)).toEqual({ a: 1, self: { $t: 'c' } });
    expect(toView(new RangeError('no'))).toEqual({ $t: 'E', v: { name: 'RangeError', message: 'no' } });
    expect(fromView({ $t: 'E', v: { name: 'RangeError', message: 'no' } })).toMatchObject({
      name: 'RangeError',
    });
    expect(() => fromView([{ when: { $t: 'D', v: 'yesterday' } }])).toThrow(
      new ViewError('[0].when: "D" expects "v": ms since 1970 or an ISO date string'),
    );
    expect(() => fromView({ $t: 'Q' })).toThrow(/unknown tag "Q"/);
    expect(() => fromView({ $t: 'c' })).toThrow(/cannot be given back/);
    expect(() => fromView(JSON.parse('{"__proto__":{"x":1}}'))).toThrow(/__proto__/);
  });
});
