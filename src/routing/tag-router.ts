/**
 * Tag routing: a call carrying a tag (the `callisto-tag` attachment) goes to the providers labelled
 * with it (`tags.tag`), else to the untagged ones; a call without a tag goes to the untagged providers,
 * else to all. Forced (`{ kind: 'tag', force: true }`), neither falls back: the call has no provider.
 */
import { labelOf } from './condition-match.js';
import { createInputMemo, keepWhere } from './input-memo.js';
import { ROUTING_TAG_ATTACHMENT, TAG_LABEL, type TagRule } from './route-rule.js';
import type { RoutedProvider, Router } from './router.js';

const NONE: readonly never[] = [];

/** The rule in force when providers carry tags and no tag rule is written. */
export const IMPLICIT_TAG_RULE: TagRule = { name: '(tags)', kind: 'tag' };

export function createTagRouter(rule: TagRule): Router {
  const force = rule.force === true;
  const memo = createInputMemo<RoutedProvider, readonly RoutedProvider[]>();
  const untagged = (p: RoutedProvider) => labelOf(p, TAG_LABEL) === undefined;
  /** Key '': the untagged providers; any other key: the providers with that tag. */
  const select = (list: readonly RoutedProvider[], key: string) =>
    key === '' ? keepWhere(list, untagged) : keepWhere(list, (p) => labelOf(p, TAG_LABEL) === key);
  return {
    name: rule.name,
    kind: 'tag',
    route(providers, call, scope) {
      const tag = call.attachments?.[ROUTING_TAG_ATTACHMENT] || undefined;
      const plain = memo.get(providers, '', select) as typeof providers;
      if (tag === undefined) {
        if (plain.length > 0 || force) {
          scope.note?.({
            applied: plain.length !== providers.length,
            why:
              plain.length > 0
                ? 'the call has no tag: untagged providers'
                : 'the call has no tag and every provider is tagged (forced: none)',
            dropped: (p) => `tagged ${labelOf(p, TAG_LABEL)}`,
          });
          return plain.length > 0 ? plain : NONE;
        }
        scope.note?.({
          applied: false,
          why: 'the call has no tag and every provider is tagged: all of them',
        });
        return providers;
      }
      const tagged = memo.get(providers, tag, select) as typeof providers;
      if (tagged.length > 0) {
        scope.note?.({
          applied: tagged.length !== providers.length,
          why: `the call's tag is ${tag}: providers tagged ${tag}`,
          dropped: (p) =>
            labelOf(p, TAG_LABEL) === undefined ? 'untagged' : `tagged ${labelOf(p, TAG_LABEL)}`,
        });
        return tagged;
      }
      if (force) {
        scope.note?.({ applied: true, why: `the call's tag is ${tag}, no provider has it (forced: none)` });
        return NONE;
      }
      scope.note?.({
        applied: true,
        why: `the call's tag is ${tag}, no provider has it: untagged providers (fallback)`,
        dropped: (p) => `tagged ${labelOf(p, TAG_LABEL)}`,
      });
      return plain;
    },
  };
}
