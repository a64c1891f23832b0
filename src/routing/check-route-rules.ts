/**
 * Checks routing rules where they are read or written (the override record's `routes`, `route set`):
 * each rule's shape, its conditions parsed (a syntax error names the character), unique names, one tag
 * rule and one zone rule at most. A bad rule is skipped alone, with a sentence saying why.
 */
import { parseCallKey, parseCondition, parseConditionRule, RouteSyntaxError } from './condition-syntax.js';
import { MAX_ROUTE_RULES, ROUTE_KINDS, type RouteRule, type SplitTarget } from './route-rule.js';

/** The most sides a split may have. */
const MAX_SIDES = 16;
const MAX_SPLIT_WEIGHT = 10_000;

export interface RouteRulesCheck {
  readonly rules: RouteRule[];
  readonly problems: string[];
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isShare = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;

/** A rule name: 1 to 64 letters, digits, `.`, `_`, `-`. */
export function isRuleName(text: unknown): text is string {
  return typeof text === 'string' && /^[\w.-]{1,64}$/.test(text);
}

/** Checks one rule; throws a TypeError (or a RouteSyntaxError) saying what is wrong. */
export function checkRouteRule(value: unknown): RouteRule {
  if (!isObject(value)) throw new TypeError(`a rule is a JSON object, not ${describe(value)}`);
  const { name, kind } = value;
  if (!isRuleName(name)) {
    throw new TypeError(`rule name ${describe(name)} is not 1 to 64 letters, digits, ".", "_" or "-"`);
  }
  const at = `rule ${name}`;
  if (!ROUTE_KINDS.includes(kind as never)) {
    throw new TypeError(`${at}: kind ${describe(kind)} is not one of ${ROUTE_KINDS.join(', ')}`);
  }
  const known: Record<string, readonly string[]> = {
    condition: ['rule', 'force'],
    tag: ['force'],
    weight: ['when', 'split', 'stickyBy', 'force'],
    zone: ['threshold', 'panicThreshold'],
  };
  for (const key of Object.keys(value)) {
    if (key !== 'name' && key !== 'kind' && !known[kind as string]!.includes(key)) {
      throw new TypeError(
        `${at}: unknown field ${key} for a ${kind} rule (known: ${known[kind as string]!.join(', ')})`,
      );
    }
  }
  if (value.force !== undefined && typeof value.force !== 'boolean') {
    throw new TypeError(`${at}: force = ${describe(value.force)} is not true or false`);
  }
  const syntax = (field: string, parse: () => unknown) => {
    try {
      parse();
    } catch (error) {
      if (error instanceof RouteSyntaxError) {
        throw new RouteSyntaxError(error.source, error.position, `${at}: ${field}: ${error.problem}`);
      }
      throw error;
    }
  };
  switch (kind) {
    case 'condition': {
      if (typeof value.rule !== 'string') throw new TypeError(`${at}: rule is not a string (when => then)`);
      syntax('rule', () => parseConditionRule(value.rule as string));
      return { name, kind, rule: value.rule, ...(value.force !== undefined ? { force: value.force } : {}) };
    }
    case 'tag':
      return { name, kind, ...(value.force !== undefined ? { force: value.force as boolean } : {}) };
    case 'weight': {
      const { when, split, stickyBy } = value;
      if (when !== undefined) {
        if (typeof when !== 'string') throw new TypeError(`${at}: when is not a string (a call condition)`);
        syntax('when', () => parseCondition(when, 'call'));
      }
      if (stickyBy !== undefined) {
        if (typeof stickyBy !== 'string') throw new TypeError(`${at}: stickyBy is not a string (a call key)`);
        syntax('stickyBy', () => parseCallKey(stickyBy));
      }
      if (!Array.isArray(split) || split.length < 1 || split.length > MAX_SIDES) {
        throw new TypeError(`${at}: split is not a list of 1 to ${MAX_SIDES} { to, weight } sides`);
      }
      const sides: SplitTarget[] = split.map((side: unknown, i) => {
        if (!isObject(side) || typeof side.to !== 'string') {
          throw new TypeError(`${at}: split[${i}] is not { to: "<provider condition>", weight }`);
        }
        const { to, weight } = side;
        if (
          typeof weight !== 'number' ||
          !Number.isInteger(weight) ||
          weight < 0 ||
          weight > MAX_SPLIT_WEIGHT
        ) {
          throw new TypeError(
            `${at}: split[${i}].weight = ${describe(weight)} is not an integer from 0 to ${MAX_SPLIT_WEIGHT}`,
          );
        }
        syntax(`split[${i}].to`, () => parseCondition(to as string, 'provider'));
        return { to: to as string, weight };
      });
      if (sides.every((side) => side.weight === 0))
        throw new TypeError(`${at}: every side of the split weighs 0`);
      return {
        name,
        kind,
        split: sides,
        ...(when !== undefined ? { when: when as string } : {}),
        ...(stickyBy !== undefined ? { stickyBy: stickyBy as string } : {}),
        ...(value.force !== undefined ? { force: value.force as boolean } : {}),
      };
    }
    default: {
      const { threshold, panicThreshold } = value;
      if (threshold !== undefined && !isShare(threshold)) {
        throw new TypeError(`${at}: threshold = ${describe(threshold)} is not a share from 0 to 1`);
      }
      if (panicThreshold !== undefined && !isShare(panicThreshold)) {
        throw new TypeError(`${at}: panicThreshold = ${describe(panicThreshold)} is not a share from 0 to 1`);
      }
      return {
        name,
        kind: 'zone',
        ...(threshold !== undefined ? { threshold } : {}),
        ...(panicThreshold !== undefined ? { panicThreshold } : {}),
      };
    }
  }
}

/** Checks a stored list of rules: the good ones kept (in order), each bad one skipped with a sentence. */
export function checkRouteRules(value: unknown): RouteRulesCheck {
  if (!Array.isArray(value)) return { rules: [], problems: ['routes is not a list of rules'] };
  const rules: RouteRule[] = [];
  const problems: string[] = [];
  for (const entry of value.slice(0, MAX_ROUTE_RULES)) {
    let rule: RouteRule;
    try {
      rule = checkRouteRule(entry);
    } catch (error) {
      problems.push(`routes: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    const clash = ruleClash(rules, rule);
    if (clash !== undefined) problems.push(`routes: ${clash}`);
    else rules.push(rule);
  }
  if (value.length > MAX_ROUTE_RULES)
    problems.push(`routes: more than ${MAX_ROUTE_RULES} rules, the rest skipped`);
  return { rules, problems };
}

/** Why `rule` cannot join `rules` (a name taken, a second tag or zone rule), or undefined. */
export function ruleClash(rules: readonly RouteRule[], rule: RouteRule): string | undefined {
  if (rules.some((other) => other.name === rule.name)) return `rule ${rule.name}: the name is taken, skipped`;
  if ((rule.kind === 'tag' || rule.kind === 'zone') && rules.some((other) => other.kind === rule.kind)) {
    return `rule ${rule.name}: a service has one ${rule.kind} rule at most, skipped`;
  }
  return undefined;
}
