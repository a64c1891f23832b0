/**
 * The condition language of routing rules: what parses, and mistakes reported at the character they are
 * at (RouteSyntaxError.position, and a caret under the text in the message).
 */
import { describe, expect, it } from 'vitest';
import { checkRouteRule, checkRouteRules } from '../../src/routing/check-route-rules.js';
import {
  parseCallKey,
  parseCondition,
  parseConditionRule,
  RouteSyntaxError,
} from '../../src/routing/condition-syntax.js';

/** The error `parse` throws, which must be a RouteSyntaxError. */
function syntaxError(parse: () => unknown): RouteSyntaxError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(RouteSyntaxError);
    return error as RouteSyntaxError;
  }
  throw new Error('expected a RouteSyntaxError');
}

describe('condition rules: what parses', () => {
  it('reads the call side, the provider side, lists, != and wildcards', () => {
    const text = 'method = getUser,listUsers & application != batch* => tag = v2 & host = 10.0.*';
    const rule = parseConditionRule(text);
    expect(rule.when).toEqual([
      { key: 'method', negate: false, values: ['getUser', 'listUsers'], at: 0 },
      { key: 'application', negate: true, values: ['batch*'], at: text.indexOf('application') },
    ]);
    expect(rule.to).toEqual([
      { key: 'tag', negate: false, values: ['v2'], at: text.indexOf('tag') },
      { key: 'host', negate: false, values: ['10.0.*'], at: text.indexOf('host') },
    ]);
  });

  it('takes arguments[N], attachments[name], tags[name] and tags.name, and quoted values', () => {
    const rule = parseConditionRule(
      'arguments[0] = 7 & attachments[x-tenant] = "a b" => tags.env = prod & tags[rack] = r1',
    );
    expect(rule.when.map((m) => m.key)).toEqual(['arguments[0]', 'attachments[x-tenant]']);
    expect(rule.when[1]!.values).toEqual(['a b']);
    expect(rule.to.map((m) => m.key)).toEqual(['tags[env]', 'tags[rack]']);
  });

  it('lets either side be empty: every call, or a block', () => {
    expect(parseConditionRule('=> zone = a').when).toEqual([]);
    expect(parseConditionRule('host = 10.0.0.9 =>').to).toEqual([]);
  });

  it('parses plain conditions and call keys', () => {
    expect(parseCondition('version = 2.*', 'provider')[0]!.values).toEqual(['2.*']);
    expect(parseCondition('', 'call')).toEqual([]);
    expect(parseCallKey('attachments[user-id]')).toBe('attachments[user-id]');
  });
});

describe('condition rules: mistakes point at the character', () => {
  const cases: Array<[string, () => unknown, number, RegExp]> = [
    ['a missing value', () => parseConditionRule('method = & tag = x => tag = v2'), 9, /expected a value/],
    ['a missing operator', () => parseConditionRule('method getUser => tag = v2'), 7, /expected "=" or "!="/],
    [
      'an unknown call key',
      () => parseConditionRule('methd = getUser => tag = v2'),
      0,
      /unknown call key "methd"/,
    ],
    [
      'a provider key on the call side',
      () => parseConditionRule('port = 1 => tag = v2'),
      0,
      /unknown call key "port"/,
    ],
    [
      'an unknown provider key',
      () => parseConditionRule('method = a => method = b'),
      14,
      /unknown provider key "method"/,
    ],
    ['no arrow', () => parseConditionRule('method = getUser'), 16, /expected "=>"/],
    ['two arrows', () => parseConditionRule('method = a => tag = b => tag = c'), 22, /one "=>"/],
    ['a dangling &', () => parseConditionRule('method = a & => tag = b'), 13, /after "&"/],
    [
      'a bad argument position',
      () => parseConditionRule('arguments[x] = 1 => tag = b'),
      10,
      /argument position/,
    ],
    ['an unterminated quote', () => parseConditionRule('method = "abc => tag = b'), 9, /unterminated quote/],
    [
      'an arrow in a plain condition',
      () => parseCondition('tag = a => tag = b', 'provider'),
      8,
      /condition rules only/,
    ],
    ['tags without a name', () => parseCondition('tags = a', 'provider'), 4, /tags needs a name/],
  ];
  for (const [what, parse, position, message] of cases) {
    it(`reports ${what} at character ${position + 1}`, () => {
      const error = syntaxError(parse);
      expect(error.position).toBe(position);
      expect(error.problem).toMatch(message);
      const [first, text, caret] = error.message.split('\n');
      expect(first).toContain(`at character ${position + 1}`);
      // the caret stands under the character named
      expect(caret!.indexOf('^') - 2).toBe(position);
      expect(text!.slice(2)).toBe(error.source);
    });
  }
});

describe('rules as stored', () => {
  it('checks each rule: a syntax error names the rule, the field and the character', () => {
    const error = syntaxError(() =>
      checkRouteRule({ name: 'canary', kind: 'weight', split: [{ to: 'tag == v2', weight: 10 }] }),
    );
    expect(error.problem).toMatch(/^rule canary: split\[0\]\.to: expected a value/);
    expect(error.position).toBe(5);
  });

  it('refuses bad shapes with a sentence', () => {
    expect(() => checkRouteRule({ name: 'x y', kind: 'tag' })).toThrow(/rule name "x y"/);
    expect(() => checkRouteRule({ name: 'x', kind: 'script' })).toThrow(/kind "script" is not one of/);
    expect(() => checkRouteRule({ name: 'x', kind: 'zone', threshold: 2 })).toThrow(
      /threshold = 2 is not a share/,
    );
    expect(() => checkRouteRule({ name: 'x', kind: 'tag', rule: 'a' })).toThrow(/unknown field rule/);
    expect(() =>
      checkRouteRule({ name: 'x', kind: 'weight', split: [{ to: 'tag = a', weight: 0 }] }),
    ).toThrow(/every side of the split weighs 0/);
  });

  it('skips bad, duplicate and second tag or zone rules alone, keeping the rest in order', () => {
    const checked = checkRouteRules([
      { name: 'a', kind: 'condition', rule: '=> tag = v2' },
      { name: 'b', kind: 'condition', rule: 'oops' },
      { name: 'a', kind: 'tag' },
      { name: 'z1', kind: 'zone' },
      { name: 'z2', kind: 'zone' },
    ]);
    expect(checked.rules.map((rule) => rule.name)).toEqual(['a', 'z1']);
    expect(checked.problems).toEqual([
      expect.stringMatching(/^routes: rule b: rule: unknown call key "oops" \(known: .*\) at character 1$/),
      'routes: rule a: the name is taken, skipped',
      'routes: rule z2: a service has one zone rule at most, skipped',
    ]);
  });
});
