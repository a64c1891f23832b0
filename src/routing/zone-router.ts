/**
 * Zone-aware routing (after Envoy's): calls stay in the caller's zone (`consumer.zone`, else
 * `server.zone`) while enough of the zone is healthy, spill over in proportion when it is not, and
 * ignore zones in panic. Counted over the providers the rules before it left (listed, healthy or not):
 *
 * - local share = healthy local providers / local providers;
 * - at or above `threshold`: every call goes to the local providers;
 * - below it: a share `local share / threshold` of the calls stays local (counted, not drawn: exact
 *   over any run of calls), the rest goes to the other zones; none healthy locally: every call leaves;
 * - panic: when the healthy share of the providers is below `panicThreshold`, zones are ignored:
 *   every healthy provider, whatever its zone.
 *
 * A consumer without a zone, or providers none of which is in its zone, are not zone-routed.
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
  const isLocal = (p: RoutedProvider) => labelOf(p, ZONE_LABEL) === zone;
  const split = (list: readonly RoutedProvider[]): Split => ({
    local: list.filter(isLocal),
    remote: list.filter((p) => !isLocal(p)),
  });
  const thresholdMillionths = Math.round(threshold * 1_000_000);
  /** What the local zone is owed while spilling: healthy local providers × 10⁶ per call. */
  let owed = 0;
  return {
    name: rule.name,
    kind: 'zone',
    route(providers, _call, scope) {
      if (zone === '') {
        scope.note?.({ applied: false, why: 'this consumer has no zone (consumer.zone, server.zone)' });
        return providers;
      }
      const { local, remote } = memo.get(providers, '', split) as {
        local: typeof providers;
        remote: typeof providers;
      };
      if (local.length === 0) {
        scope.note?.({ applied: false, why: `no provider is in zone ${zone}` });
        return providers;
      }
      let healthyLocal = local.length;
      let healthyAll = providers.length;
      if (!scope.allHealthy) {
        healthyLocal = 0;
        for (const p of local) if (scope.isHealthy(p)) healthyLocal++;
        healthyAll = healthyLocal;
        for (const p of remote) if (scope.isHealthy(p)) healthyAll++;
      }
      if (panic > 0 && healthyAll < panic * providers.length) {
        scope.note?.({
          applied: false,
          why: `panic: ${healthyAll} of ${providers.length} providers healthy, below ${percent(panic)}: every zone`,
        });
        return providers;
      }
      const share = healthyLocal / local.length;
      const inZone = (p: RoutedProvider) => `in zone ${labelOf(p, ZONE_LABEL) ?? '(none)'}`;
      if (share >= threshold || remote.length === 0) {
        scope.note?.({
          applied: true,
          why: `${healthyLocal} of ${local.length} providers of zone ${zone} healthy (${percent(share)}, threshold ${percent(threshold)}): local`,
          dropped: inZone,
        });
        return local;
      }
      const stay = share / threshold;
      // in millionths, integers: exact over any run (a float sum drifts by a call in thousands)
      owed += healthyLocal * 1_000_000;
      const cost = thresholdMillionths * local.length;
      const staying = healthyLocal > 0 && owed >= cost;
      if (staying) owed -= cost;
      if (healthyLocal === 0) owed = 0;
      scope.note?.({
        applied: true,
        why: `${healthyLocal} of ${local.length} providers of zone ${zone} healthy (${percent(share)}, below ${percent(threshold)}): ${percent(stay)} of calls stay, the rest spill over; this one ${staying ? 'stays' : 'spills over'}`,
        dropped: inZone,
      });
      return staying ? local : remote;
    },
  };
}
