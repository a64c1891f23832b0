/**
 * The condition language of routing rules (Dubbo's condition routes), parsed once per rule change:
 *
 *   rule       := [matches] "=>" [matches]        (condition rules: the call's side => the providers')
 *   condition  := matches                          (a split's `to`, a weight rule's `when`)
 *   matches    := match ("&" match)*
 *   match      := key ("=" | "!=") value ("," value)*
 *   value      := a run of characters other than space & , = (`*` is a wildcard), or "quoted"
 *
 * Keys of the call's side: method, service, version, group, application, host, zone, tag,
 * arguments[N], attachments[name]. Keys of a provider: host, port, address, application, version,
 * group, tag, zone, tags[name] (also written tags.name, attachments.name).
 *
 * A mistake is a RouteSyntaxError that names the character it is at and shows it under the text.
 */

export type ConditionSide = 'call' | 'provider';

/** One `key = a,b` (or `!=`) of a condition. */
export interface ConditionMatch {
  readonly key: string;
  readonly negate: boolean;
  readonly values: readonly string[];
  /** Where the key starts in the text (0-based). */
  readonly at: number;
}

export interface ParsedRule {
  readonly when: readonly ConditionMatch[];
  /** Empty: matching calls get no provider (a block). */
  readonly to: readonly ConditionMatch[];
}

const CALL_KEYS = ['method', 'service', 'version', 'group', 'application', 'host', 'zone', 'tag'];
const PROVIDER_KEYS = ['host', 'port', 'address', 'application', 'version', 'group', 'tag', 'zone'];
const INDEXED: Record<ConditionSide, readonly string[]> = {
  call: ['arguments', 'attachments'],
  provider: ['tags'],
};

/** Longest text a rule or condition may have. */
export const MAX_CONDITION_LENGTH = 4_096;

/** A condition that does not parse: where, what was expected, the text with a caret under the spot. */
export class RouteSyntaxError extends Error {
  override name = 'RouteSyntaxError';
  constructor(
    /** The text parsed. */
    readonly source: string,
    /** 0-based position of the mistake. */
    readonly position: number,
    /** What is wrong there, without the position. */
    readonly problem: string,
  ) {
    super(`${problem} at character ${position + 1}\n  ${source}\n  ${' '.repeat(position)}^`);
  }
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isValueChar = (text: string, i: number): boolean => {
  const c = text[i];
  if (c === undefined || isSpace(c) || c === '&' || c === ',' || c === '=' || c === '"') return false;
  return !(c === '!' && text[i + 1] === '=');
};

class Parser {
  pos = 0;
  constructor(
    readonly text: string,
    readonly side: ConditionSide,
  ) {}

  fail(problem: string, at = this.pos): never {
    throw new RouteSyntaxError(this.text, Math.min(at, this.text.length), problem);
  }

  skip(): void {
    while (isSpace(this.text[this.pos])) this.pos++;
  }

  atArrow(): boolean {
    return this.text.startsWith('=>', this.pos);
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  matches(stopAtArrow: boolean): ConditionMatch[] {
    const out: ConditionMatch[] = [];
    this.skip();
    if (this.atEnd() || (stopAtArrow && this.atArrow())) return out;
    for (;;) {
      out.push(this.match());
      this.skip();
      if (this.text[this.pos] !== '&') break;
      this.pos++;
      this.skip();
      if (this.atEnd() || this.atArrow()) this.fail('expected a condition after "&"');
    }
    return out;
  }

  key(): string {
    const start = this.pos;
    const word = /^[A-Za-z_][\w-]*/.exec(this.text.slice(start));
    if (!word) {
      const known = this.side === 'call' ? 'method, application or arguments[0]' : 'host, tag or tags[env]';
      this.fail(`expected a key such as ${known}`);
    }
    this.pos += word[0].length;
    const name = word[0];
    const indexed = INDEXED[this.side].includes(name);
    if (indexed) {
      let index: string | undefined;
      if (this.text[this.pos] === '[') {
        const close = this.text.indexOf(']', this.pos);
        if (close < 0) this.fail('expected "]"', this.text.length);
        index = this.text.slice(this.pos + 1, close).trim();
        if (index === '') this.fail(`expected a name or number inside ${name}[…]`, this.pos + 1);
        this.pos = close + 1;
      } else if (this.text[this.pos] === '.') {
        const part = /^[\w-]+/.exec(this.text.slice(this.pos + 1));
        if (!part) this.fail(`expected a name after "${name}."`, this.pos + 1);
        index = part[0];
        this.pos += 1 + part[0].length;
      } else this.fail(`expected ${name}[…] (${name} needs a name or position)`);
      if (name === 'arguments' && !/^\d{1,3}$/.test(index)) {
        this.fail(`expected an argument position (0, 1, …), not "${index}"`, start + name.length + 1);
      }
      return `${name}[${index}]`;
    }
    const known = this.side === 'call' ? CALL_KEYS : PROVIDER_KEYS;
    if (!known.includes(name)) {
      const all = [...known, ...INDEXED[this.side].map((k) => `${k}[…]`)].join(', ');
      this.fail(`unknown ${this.side === 'call' ? 'call' : 'provider'} key "${name}" (known: ${all})`, start);
    }
    return name;
  }

  value(): string {
    const start = this.pos;
    const quote = this.text[start];
    if (quote === '"') {
      const close = this.text.indexOf('"', start + 1);
      if (close < 0) this.fail('unterminated quote', start);
      this.pos = close + 1;
      return this.text.slice(start + 1, close);
    }
    while (isValueChar(this.text, this.pos)) this.pos++;
    if (this.pos === start) this.fail('expected a value');
    return this.text.slice(start, this.pos);
  }

  match(): ConditionMatch {
    const at = this.pos;
    const key = this.key();
    this.skip();
    let negate = false;
    if (this.text.startsWith('!=', this.pos)) {
      negate = true;
      this.pos += 2;
    } else if (this.text[this.pos] === '=' && !this.atArrow()) this.pos += 1;
    else this.fail(`expected "=" or "!=" after ${key}`);
    this.skip();
    const values = [this.value()];
    this.skip();
    while (this.text[this.pos] === ',') {
      this.pos++;
      this.skip();
      values.push(this.value());
      this.skip();
    }
    return { key, negate, values, at };
  }
}

function checkLength(text: string): void {
  if (typeof text !== 'string') throw new TypeError(`a condition must be a string, not ${typeof text}`);
  if (text.length > MAX_CONDITION_LENGTH) {
    throw new RouteSyntaxError(text.slice(0, 80), 80, `longer than ${MAX_CONDITION_LENGTH} characters`);
  }
}

/** Parses a condition rule `when => then`. */
export function parseConditionRule(text: string): ParsedRule {
  checkLength(text);
  const parser = new Parser(text, 'call');
  const when = parser.matches(true);
  parser.skip();
  if (!parser.atArrow()) {
    parser.fail(
      parser.atEnd()
        ? 'expected "=>" (a rule is: call conditions => provider conditions)'
        : 'expected "&" or "=>"',
    );
  }
  parser.pos += 2;
  const then = new Parser(text, 'provider');
  then.pos = parser.pos;
  const matches = then.matches(false);
  then.skip();
  if (!then.atEnd()) then.fail(then.atArrow() ? 'a rule has one "=>"' : 'expected "&" or the end');
  return { when, to: matches };
}

/** Parses a plain condition of one side (a split's `to`: provider; a `when` or `stickyBy`: call). */
export function parseCondition(text: string, side: ConditionSide): ConditionMatch[] {
  checkLength(text);
  const parser = new Parser(text, side);
  const matches = parser.matches(false);
  parser.skip();
  if (!parser.atEnd()) {
    parser.fail(parser.atArrow() ? `"=>" belongs in condition rules only` : 'expected "&" or the end');
  }
  return matches;
}

/** Parses a call key alone (`stickyBy`: `attachments[user]`, `arguments[0]`, `method`). */
export function parseCallKey(text: string): string {
  checkLength(text);
  const parser = new Parser(text, 'call');
  parser.skip();
  const key = parser.key();
  parser.skip();
  if (!parser.atEnd()) parser.fail('expected one call key and nothing after it');
  return key;
}
