/**
 * Zone-aware routing (after Envoy's): calls stay in the caller's zone (`consumer.zone`, else
 * `server.zone`) while enough of the zone is healthy, spill over in proportion when it is not, and
 * ignore zones in panic.
 *
 * - local share = healthy local providers / local providers listed (healthy or not, after no rule);
 * - at or above `threshold`: every call goes to the healthy local providers;
 * - below it: a share `local share / threshold` of the calls stays local (counted, not drawn: exact
 *   over any run of calls), the rest goes to the healthy providers of the other zones; none healthy
 *   locally: every call leaves the zone;
 * - panic: when the healthy share of all the listed providers is below `panicThreshold`, zones are
 *   ignored: every healthy provider, whatever its zone.
 *
 * A consumer without a zone, or a service without providers in its zone, is not zone-routed.
 */
import { labelOf } from './condition-match.js';
import { createInputMemo } from './input-memo.js';
import { DEFAULT_PANIC_THRESHOLD, DEFAULT_ZONE_THRESHOLD, ZONE_LABEL, type ZoneRule } from './route-rule.js';
import type { RouteCaller, RoutedProvider, Router } from './router.js';

interface Split {
  readonly local: readonly RoutedProvider[];
  readonly remote: readonly RoutedProvider[];
}

const percent = (share: number) => `${Math.round(share * 1000) / 10}%`;

export function createZoneRouter(rule: ZoneRule, caller: RouteCaller): Router {
  const zone = caller.zone;
  const threshold = rule.threshold ?? DEFAULT_ZONE_THRESHOLD;
  const panic = rule.panicThreshold ?? DEFAULT_PANIC_THRESHOLD;
  const memo = createInputMemo<RoutedProvider, Split>();
  const totals = createInputMemo<RoutedProvider, number>();
  const isLocal = (p: RoutedProvider) => labelOf(p, ZONE_LABEL) === zone;
  /** Accumulated share of calls owed to the local zone while spilling. */
  let owed = 0;
  return {
    name: rule.name,
    kind: 'zone',
    route(providers, _call, scope) {
      if (zone === '') {
        scope.note?.({ applied: false, why: 'this consumer has no zone (consumer.zone, server.zone)' });
        return providers;
      }
      const all = scope.all;
      const localListed = totals.get(all, '', () => all.filter(isLocal).length);
      if (localListed === 0) {
        scope.note?.({ applied: false, why: `no provider is listed in zone ${zone}` });
        return providers;
      }
      if (panic > 0 && providers.length < panic * all.length) {
        scope.note?.({
          applied: false,
          why: `panic: ${providers.length} of ${all.length} providers healthy, below ${percent(panic)}: every zone`,
        });
        return providers;
      }
      const { local, remote } = memo.get(providers, '', () => ({
        local: providers.filter(isLocal),
        remote: providers.filter((p) => !isLocal(p)),
      }));
      const share = local.length / localListed;
      const inZone = (p: RoutedProvider) => `in zone ${labelOf(p, ZONE_LABEL) ?? '(none)'}`;
      if (share >= threshold || remote.length === 0) {
        scope.note?.({
          applied: local.length !== providers.length,
          why: `${local.length} of ${localListed} providers of zone ${zone} healthy (${percent(share)}, threshold ${percent(threshold)}): local`,
          dropped: inZone,
        });
        return (local.length > 0 ? local : providers) as typeof providers;
      }
      const stay = share / threshold;
      owed += stay;
      const staying = local.length > 0 && owed >= 1;
      if (staying) owed -= 1;
      if (local.length === 0) owed = 0;
      scope.note?.({
        applied: true,
        why: `${local.length} of ${localListed} providers of zone ${zone} healthy (${percent(share)}, below ${percent(threshold)}): ${percent(stay)} of calls stay, the rest spill over; this one ${staying ? 'stays' : 'spills over'}`,
        dropped: inZone,
      });
      return (staying ? local : remote) as typeof providers;
    },
  };
}
