/**
 * Parsed conditions (condition-syntax.ts) made into predicates, once per rule change: how each key reads
 * a call or a provider, and how values match (exact, `*` wildcards, lists, `!=`). A key with no value
 * (a provider without the label, an argument that is not a string, number or boolean) matches no `=`
 * and every `!=`.
 */
import type { ConditionMatch } from './condition-syntax.js';
import { ROUTING_TAG_ATTACHMENT, TAG_LABEL, VERSION_LABEL, ZONE_LABEL } from './route-rule.js';
import type { RouteCall, RouteCaller, RoutedProvider } from './router.js';

export type Reader<T> = (subject: T) => string | undefined;

function valueMatcher(values: readonly string[]): (value: string) => boolean {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const value of values) {
    if (!value.includes('*')) exact.add(value);
    else {
      const source = value
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*');
      patterns.push(new RegExp(`^${source}$`, 's'));
    }
  }
  if (patterns.length === 0) return (value) => exact.has(value);
  return (value) => exact.has(value) || patterns.some((pattern) => pattern.test(value));
}

/** One match made a predicate over what `read` gives. */
export function compileMatch<T>(match: ConditionMatch, read: Reader<T>): (subject: T) => boolean {
  const hit = valueMatcher(match.values);
  return match.negate
    ? (subject) => {
        const value = read(subject);
        return value === undefined || !hit(value);
      }
    : (subject) => {
        const value = read(subject);
        return value !== undefined && hit(value);
      };
}

/** Every match of a condition at once (an empty condition matches everything). */
export function compileMatches<T>(
  matches: readonly ConditionMatch[],
  reader: (key: string) => Reader<T>,
): (subject: T) => boolean {
  const tests = matches.map((match) => compileMatch(match, reader(match.key)));
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (subject) => {
    for (const test of tests) if (!test(subject)) return false;
    return true;
  };
}

/** The text of a match as written (for explanations). */
export function describeMatches(matches: readonly ConditionMatch[]): string {
  if (matches.length === 0) return '(nothing)';
  return matches.map((m) => `${m.key} ${m.negate ? '!=' : '='} ${m.values.join(',')}`).join(' & ');
}

function indexOf(key: string): string {
  return key.slice(key.indexOf('[') + 1, -1);
}

function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return undefined;
}

/** How a call key reads a call (the consumer's own identity for application, host, zone). */
export function callReader(key: string, caller: RouteCaller): Reader<RouteCall> {
  switch (key) {
    case 'method':
      return (call) => call.method;
    case 'service':
      return (call) => call.service.name;
    case 'version':
      return (call) => call.service.version;
    case 'group':
      return (call) => call.service.group;
    case 'application':
      return () => caller.application;
    case 'host':
      return () => caller.host;
    case 'zone':
      return () => caller.zone || undefined;
    case 'tag':
      return (call) => call.attachments?.[ROUTING_TAG_ATTACHMENT] || undefined;
  }
  const index = indexOf(key);
  if (key.startsWith('arguments[')) {
    const position = Number(index);
    return (call) => scalar(call.args[position]);
  }
  return (call) => call.attachments?.[index];
}

/** A provider's label, read from its record. */
export function labelOf(provider: RoutedProvider, label: string): string | undefined {
  const value = provider.record?.tags[label];
  return value === '' ? undefined : value;
}

/** How a provider key reads a provider. */
export function providerReader(key: string): Reader<RoutedProvider> {
  switch (key) {
    case 'host':
      return (p) => p.host;
    case 'port':
      return (p) => String(p.port);
    case 'address':
      return (p) => `${p.host}:${p.port}`;
    case 'application':
      return (p) => p.record?.application;
    case 'version':
      return (p) => labelOf(p, VERSION_LABEL) ?? p.record?.version;
    case 'group':
      return (p) => p.record?.group;
    case 'tag':
      return (p) => labelOf(p, TAG_LABEL);
    case 'zone':
      return (p) => labelOf(p, ZONE_LABEL);
  }
  const label = indexOf(key);
  return (p) => p.record?.tags[label];
}
