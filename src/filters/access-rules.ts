/**
 * `access` (provider, after `auth`): which callers may call which services and methods, by
 * the caller's identity (`invocation.identity.id`, e.g. the consumer application's name). A rule names
 * a service (or `*`), optionally a method (or `*`), and identities it allows and denies (`*`: anyone,
 * authenticated or not). For a call, every rule that matches it counts:
 *
 * - a caller a matching rule denies is refused;
 * - else, when some matching rule has an allow list, the most specific such rules decide (a service
 *   and method named, over a service named, over a method named, over neither): only the callers
 *   their allow lists name are let in;
 * - else `defaultAccess` decides (`allow` or `deny`).
 *
 * A refusal is `Unauthorized`, naming the caller and the method (never credentials). Decisions are
 * compiled once per method.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';

export interface AccessRule {
  /** A service name, or `*` (every service). Default `*`. */
  readonly service?: string;
  /** A method name, or `*`. Default `*`. */
  readonly method?: string;
  /** Identities let in (`*`: anyone). */
  readonly allow?: readonly string[];
  /** Identities refused (`*`: anyone); deny beats allow. */
  readonly deny?: readonly string[];
}

export type DefaultAccess = 'allow' | 'deny';

export interface AccessRulesOptions {
  readonly rules: readonly AccessRule[];
  /** What a call no allow list speaks for gets. */
  readonly defaultAccess: DefaultAccess;
}

interface Decision {
  readonly deny: ReadonlySet<string>;
  /** undefined: no matching rule has an allow list */
  readonly allow: ReadonlySet<string> | undefined;
}

const ANYONE = '*';

/** How specific a rule is: a named service counts more than a named method, both most. */
const specificity = (rule: AccessRule): number =>
  ((rule.service ?? ANYONE) === ANYONE ? 0 : 2) + ((rule.method ?? ANYONE) === ANYONE ? 0 : 1);

/** Whether `id` (undefined: an anonymous caller) may make a call with this decision. */
function permitted(decision: Decision, id: string | undefined, defaultAccess: DefaultAccess): boolean {
  if (decision.deny.has(ANYONE) || (id !== undefined && decision.deny.has(id))) return false;
  if (decision.allow !== undefined) {
    return decision.allow.has(ANYONE) || (id !== undefined && decision.allow.has(id));
  }
  return defaultAccess === 'allow';
}

/** Checks rules; throws a TypeError naming the rule that is wrong. */
export function checkAccessRules(rules: readonly AccessRule[]): void {
  rules.forEach((rule, index) => {
    const where = `access rule ${index}`;
    if (typeof rule !== 'object' || rule === null) throw new TypeError(`${where}: not an object`);
    for (const key of ['service', 'method'] as const) {
      if (rule[key] !== undefined && (typeof rule[key] !== 'string' || rule[key] === '')) {
        throw new TypeError(`${where}: ${key} must be a name or "*"`);
      }
    }
    if (rule.allow === undefined && rule.deny === undefined)
      throw new TypeError(`${where}: give allow or deny (or both)`);
  });
}

export function accessRulesFilter(options: AccessRulesOptions): NamedFilter {
  const { rules, defaultAccess } = options;
  checkAccessRules(rules);
  /** Decisions by service (its key object, the same for every call of it), then method. */
  const decisions = new WeakMap<object, Map<string, Decision>>();
  const compile = (service: string, method: string): Decision => {
    const matching = rules.filter(
      (rule) =>
        ((rule.service ?? ANYONE) === ANYONE || rule.service === service) &&
        ((rule.method ?? ANYONE) === ANYONE || rule.method === method),
    );
    const allowing = matching.filter((rule) => rule.allow !== undefined);
    // the allow lists of the most specific rules that have one speak for the call
    const top = Math.max(-1, ...allowing.map(specificity));
    return {
      deny: new Set(matching.flatMap((rule) => rule.deny ?? [])),
      allow:
        allowing.length === 0
          ? undefined
          : new Set(allowing.filter((rule) => specificity(rule) === top).flatMap((rule) => rule.allow ?? [])),
    };
  };
  const decide = (key: Invocation['service'], method: string): Decision => {
    let byMethod = decisions.get(key);
    if (byMethod === undefined) {
      byMethod = new Map();
      decisions.set(key, byMethod);
    }
    let decision = byMethod.get(method);
    if (decision === undefined) {
      decision = compile(key.name, method);
      byMethod.set(method, decision);
    }
    return decision;
  };
  return defineFilter({
    name: 'access',
    position: 'provider',
    order: FILTER_ORDER.provider.access,
    start(invocation) {
      const id = invocation.identity?.id;
      const decision = decide(invocation.service, invocation.method);
      if (!permitted(decision, id, defaultAccess)) {
        throw new RpcError(
          'Unauthorized',
          `${invocation.service.name}.${invocation.method}: ${id === undefined ? 'an anonymous caller' : JSON.stringify(id)} is not allowed to call it`,
        );
      }
    },
  });
}
