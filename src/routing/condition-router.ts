/**
 * A condition rule (`when => then`, Dubbo's condition router): a call matching `when` goes to the
 * providers matching `then`. When `then` matches none, the rule is ignored for that call unless it is
 * forced (then the call has no provider); an empty `then` blocks the matching calls.
 */
import { callReader, compileMatches, describeMatches, providerReader } from './condition-match.js';
import { parseConditionRule } from './condition-syntax.js';
import { createInputMemo, keepWhere } from './input-memo.js';
import type { ConditionRule } from './route-rule.js';
import type { RouteCall, RouteCaller, RoutedProvider, Router } from './router.js';

const NONE: readonly never[] = [];

export function createConditionRouter(rule: ConditionRule, caller: RouteCaller): Router {
  const parsed = parseConditionRule(rule.rule);
  const when = compileMatches<RouteCall>(parsed.when, (key) => callReader(key, caller));
  const then = compileMatches<RoutedProvider>(parsed.to, providerReader);
  const block = parsed.to.length === 0;
  const whenText = describeMatches(parsed.when);
  const thenText = describeMatches(parsed.to);
  const memo = createInputMemo<RoutedProvider, readonly RoutedProvider[]>();
  const keep = (list: readonly RoutedProvider[]) => keepWhere(list, then);
  return {
    name: rule.name,
    kind: 'condition',
    route(providers, call, scope) {
      if (!when(call)) {
        scope.note?.({ applied: false, why: `the call does not match ${whenText}` });
        return providers;
      }
      if (block) {
        scope.note?.({ applied: true, why: `the call matches ${whenText}: blocked (nothing after "=>")` });
        return NONE;
      }
      const kept = memo.get(providers, '', keep) as typeof providers;
      if (kept.length === 0 && rule.force !== true) {
        scope.note?.({
          applied: false,
          why: `the call matches ${whenText} but no provider matches ${thenText}; not forced: ignored`,
        });
        return providers;
      }
      scope.note?.({
        applied: true,
        why: `the call matches ${whenText}: providers matching ${thenText}${rule.force ? ' (forced)' : ''}`,
        dropped: () => `does not match ${thenText}`,
      });
      return kept;
    },
  };
}
