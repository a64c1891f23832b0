/**
 * A weighted split (90/10 between versions or tags): the providers are grouped by the first side whose
 * `to` they match (providers matching no side are left out), and each call (matching `when`) takes one
 * side. Without `stickyBy` the sides take turns in proportion to their weights (smooth weighted round
 * robin: exact shares, no randomness, per consumer); with it, the key's hash picks the side, so one key
 * always lands on the same side while the sides are unchanged. A side without providers passes its
 * share to the others, unless the rule is forced (its calls then have no provider).
 */
import { callReader, compileMatches, describeMatches, providerReader } from './condition-match.js';
import { parseCallKey, parseCondition } from './condition-syntax.js';
import { createInputMemo } from './input-memo.js';
import type { WeightRule } from './route-rule.js';
import type { RouteCall, RouteCaller, RoutedProvider, Router } from './router.js';

const NONE: readonly never[] = [];

/** The 32-bit FNV-1a hash of a string (the sticky key's bucket). */
export function stickyHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  // mix the low bits once more (FNV's last byte matters little to them)
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return hash >>> 0;
}

interface Sides {
  /** The providers of each side. */
  readonly groups: readonly (readonly RoutedProvider[])[];
}

export function createWeightRouter(rule: WeightRule, caller: RouteCaller): Router {
  const when = compileMatches<RouteCall>(parseCondition(rule.when ?? '', 'call'), (key) =>
    callReader(key, caller),
  );
  const whenText = rule.when ? describeMatches(parseCondition(rule.when, 'call')) : undefined;
  const sides = rule.split.map((side) => {
    const matches = parseCondition(side.to, 'provider');
    return {
      test: compileMatches<RoutedProvider>(matches, providerReader),
      text: describeMatches(matches),
      weight: side.weight,
    };
  });
  const sticky = rule.stickyBy === undefined ? undefined : callReader(parseCallKey(rule.stickyBy), caller);
  const force = rule.force === true;
  const memo = createInputMemo<RoutedProvider, Sides>();
  /** Smooth weighted round robin: each side's running credit. */
  const credit = sides.map(() => 0);

  const group = (providers: readonly RoutedProvider[]): Sides => {
    const groups: RoutedProvider[][] = sides.map(() => []);
    for (const provider of providers) {
      const index = sides.findIndex((side) => side.test(provider));
      if (index >= 0) groups[index]!.push(provider);
    }
    return { groups };
  };

  /** Whether each side may take the current call (weight > 0, a healthy provider): reused per call. */
  const usable = sides.map(() => false);

  /** The side of a call: by turns among the usable sides, or by the sticky key's hash over all of them. */
  const choose = (key: string | undefined): number => {
    if (key !== undefined) {
      const total = sides.reduce((sum, side) => sum + side.weight, 0);
      let point = total === 0 ? 0 : stickyHash(key) % total;
      for (let i = 0; i < sides.length; i++) {
        point -= sides[i]!.weight;
        if (point < 0) return i;
      }
      return sides.length - 1;
    }
    let best = -1;
    let total = 0;
    for (let i = 0; i < sides.length; i++) {
      if (!usable[i]) continue;
      const weight = sides[i]!.weight;
      total += weight;
      credit[i]! += weight;
      if (best < 0 || credit[i]! > credit[best]!) best = i;
    }
    if (best >= 0) credit[best]! -= total;
    return best;
  };

  return {
    name: rule.name,
    kind: 'weight',
    route(providers, call, scope) {
      if (!when(call)) {
        scope.note?.({ applied: false, why: `the call does not match ${whenText}` });
        return providers;
      }
      const { groups } = memo.get(providers, '', group);
      let any = false;
      for (let i = 0; i < sides.length; i++) {
        const members = groups[i]!;
        let healthy = scope.allHealthy && members.length > 0;
        if (!scope.allHealthy)
          for (let j = 0; j < members.length && !healthy; j++)
            healthy = scope.isHealthy(members[j] as (typeof providers)[number]);
        usable[i] = healthy && sides[i]!.weight > 0;
        any ||= usable[i]!;
      }
      if (!any) {
        scope.note?.({
          applied: force,
          why: `no side of the split has a healthy provider: ${force ? 'none (forced)' : 'ignored'}`,
        });
        return force ? NONE : providers;
      }
      const key = sticky === undefined ? undefined : (sticky(call) ?? '');
      let index = choose(key);
      if (!usable[index]) {
        if (force) {
          scope.note?.({
            applied: true,
            why: `side ${sides[index]!.text} has no healthy provider (forced: none)`,
          });
          return NONE;
        }
        // a sticky key on a side that is down: the next usable side after it
        let next = index;
        do next = (next + 1) % sides.length;
        while (!usable[next]);
        index = next;
      }
      if (scope.note !== undefined) {
        const side = sides[index]!;
        const total = sides.reduce((sum, s, i) => sum + (usable[i] ? s.weight : 0), 0);
        scope.note({
          applied: true,
          why: `side ${side.text} (weight ${side.weight} of ${total}${key !== undefined ? `, sticky by ${rule.stickyBy} = ${key}` : ', by turns'})`,
          dropped: (p) => {
            const at = sides.findIndex((s) => s.test(p));
            return at < 0 ? 'on no side of the split' : `on side ${sides[at]!.text}`;
          },
        });
      }
      return groups[index] as typeof providers;
    },
  };
}
