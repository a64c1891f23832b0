/**
 * The routing stage between discovery and balancing (docs/routing.md): the service's rules compiled
 * once per change into routers, in the kinds' order (condition rules as listed, tag routing, weighted
 * splits as listed, zone routing), each narrowing the healthy providers of one call.
 *
 * `compileRouting` answers undefined when there is nothing to do (no rule, no tagged provider): the
 * directory then skips the stage, and a consumer without rules pays nothing for it. `explainRouting`
 * runs freshly compiled routers over one call and says, rule by rule, what each did and why each
 * provider was kept or dropped (`callisto route explain`, `directory.explain`).
 */
import { labelOf } from './condition-match.js';
import { createConditionRouter } from './condition-router.js';
import {
  ROUTE_KINDS,
  ROUTING_TAG_ATTACHMENT,
  type RouteKind,
  type RouteRule,
  TAG_LABEL,
} from './route-rule.js';
import type { RouteCall, RouteCaller, RoutedProvider, Router, RouteScope, RouteStepNote } from './router.js';
import { createTagRouter, IMPLICIT_TAG_RULE } from './tag-router.js';
import { createWeightRouter } from './weight-router.js';
import { createZoneRouter } from './zone-router.js';

export interface RoutingInit {
  readonly rules: readonly RouteRule[];
  readonly caller: RouteCaller;
  /** Some provider carries a `tag` label: tag routing is on even without a tag rule. */
  readonly tagged: boolean;
}

export interface RoutingStage {
  readonly routers: readonly Router[];
  /**
   * The providers `call` may go to: the routers run over `listed` (every routable provider, healthy or
   * not), then the unhealthy ones are dropped (those not in `healthy`, the directory's selectable ones)
   * unless that leaves none (trying beats failing unsent). Empty when a rule leaves the call none.
   */
  route<P extends RoutedProvider>(listed: readonly P[], call: RouteCall, healthy: readonly P[]): readonly P[];
}

const ALWAYS = () => true;

/**
 * The healthy part of routed lists, kept per routed array while the healthy list is the same: a steady
 * call in a degraded service costs a lookup, not a filter.
 */
function createHealthFilter() {
  let healthyList: readonly RoutedProvider[] | undefined;
  let healthySet: ReadonlySet<RoutedProvider> = new Set();
  let kept = new WeakMap<readonly RoutedProvider[], readonly RoutedProvider[]>();
  return {
    /** Makes `healthy` the current healthy list. */
    use(healthy: readonly RoutedProvider[]): (p: RoutedProvider) => boolean {
      if (healthy !== healthyList) {
        healthyList = healthy;
        healthySet = new Set(healthy);
        kept = new WeakMap();
      }
      return (p) => healthySet.has(p);
    },
    keep<P extends RoutedProvider>(routed: readonly P[]): readonly P[] {
      let result = kept.get(routed);
      if (result === undefined) {
        const healthy = routed.filter((p) => healthySet.has(p));
        result = healthy.length === 0 ? routed : healthy.length === routed.length ? routed : healthy;
        kept.set(routed, result);
      }
      return result as readonly P[];
    },
  };
}

/** Whether any of `providers` carries a `tag` label (tag routing is then on). */
export function anyTagged(providers: readonly RoutedProvider[]): boolean {
  return providers.some((p) => labelOf(p, TAG_LABEL) !== undefined);
}

function makeRouter(rule: RouteRule, caller: RouteCaller): Router {
  switch (rule.kind) {
    case 'condition':
      return createConditionRouter(rule, caller);
    case 'tag':
      return createTagRouter(rule);
    case 'weight':
      return createWeightRouter(rule, caller);
    case 'zone':
      return createZoneRouter(rule, caller);
  }
}

/** The rules in the order a call meets them (the implicit tag rule in when providers are tagged). */
export function orderedRules(rules: readonly RouteRule[], tagged: boolean): RouteRule[] {
  const ordered: RouteRule[] = [];
  for (const kind of ROUTE_KINDS) {
    const ofKind = rules.filter((rule) => rule.kind === kind);
    if (kind === 'tag' && ofKind.length === 0 && tagged) ordered.push(IMPLICIT_TAG_RULE);
    ordered.push(...ofKind);
  }
  return ordered;
}

/** The routers of `init`, or undefined when no rule applies to anything (the stage is skipped). */
export function compileRouting(init: RoutingInit): RoutingStage | undefined {
  const rules = orderedRules(init.rules, init.tagged);
  if (rules.length === 0) return undefined;
  const routers = rules.map((rule) => makeRouter(rule, init.caller));
  const health = createHealthFilter();
  let isHealthy: (p: RoutedProvider) => boolean = ALWAYS;
  let healthyOf: readonly RoutedProvider[] | undefined;
  // one scope for every call: routers never call out, so no two calls share it at once
  const scope: { isHealthy: (p: RoutedProvider) => boolean; allHealthy: boolean; note: undefined } = {
    isHealthy: ALWAYS,
    allHealthy: true,
    note: undefined,
  };
  return {
    routers,
    route(listed, call, healthy) {
      const allHealthy = healthy === listed || healthy.length === listed.length;
      if (!allHealthy && healthy !== healthyOf) {
        healthyOf = healthy;
        isHealthy = health.use(healthy);
      }
      scope.allHealthy = allHealthy;
      scope.isHealthy = allHealthy ? ALWAYS : isHealthy;
      let list = listed;
      for (let i = 0; i < routers.length && list.length > 0; i++) {
        list = routers[i]!.route(list, call, scope as RouteScope<(typeof list)[number]>);
      }
      return allHealthy || list.length === 0 ? list : health.keep(list);
    },
  };
}

/** What one rule did to one call. */
export interface RouteStep {
  readonly rule: string;
  readonly kind: RouteKind;
  readonly applied: boolean;
  readonly why: string;
  /** The providers left after it. */
  readonly kept: string[];
  readonly dropped: Array<{ readonly address: string; readonly why: string }>;
}

/** One call's way through the stage, for `route explain`. */
export interface RouteExplanation {
  readonly service: string;
  readonly method: string;
  /** The call's tag, if any. */
  readonly tag: string | undefined;
  readonly caller: RouteCaller;
  /** Every routable provider, with whether it was healthy (the stage's input). */
  readonly providers: Array<{
    readonly address: string;
    readonly healthy: boolean;
    readonly labels: Readonly<Record<string, string>>;
  }>;
  /** The rules in the order met; empty when the service has none (the stage is skipped). */
  readonly steps: RouteStep[];
  /** The providers the balancer chooses among (the unhealthy ones dropped unless none is left). */
  readonly result: string[];
  /** One sentence: where the call goes. */
  readonly outcome: string;
}

export interface ExplainInit<P extends RoutedProvider> extends RoutingInit {
  readonly call: RouteCall;
  /** Every routable provider. */
  readonly all: readonly P[];
  /** The healthy ones (default: all). */
  readonly healthy?: readonly P[];
}

export function explainRouting<P extends RoutedProvider>(init: ExplainInit<P>): RouteExplanation {
  const { call, all } = init;
  const healthy = init.healthy ?? all;
  const healthySet = new Set<RoutedProvider>(healthy);
  const allHealthy = healthy.length === all.length;
  const rules = orderedRules(init.rules, init.tagged);
  const steps: RouteStep[] = [];
  let list: readonly P[] = all;
  for (const rule of rules) {
    if (list.length === 0) break;
    let note: RouteStepNote = { applied: false, why: 'no effect' };
    const scope: RouteScope<P> = {
      isHealthy: (p) => healthySet.has(p),
      allHealthy,
      note: (value) => {
        note = value;
      },
    };
    const next = makeRouter(rule, init.caller).route(list, call, scope);
    const keptSet = new Set(next);
    const explained = note;
    steps.push({
      rule: rule.name,
      kind: rule.kind,
      applied: explained.applied,
      why: explained.why,
      kept: next.map((p) => p.address),
      dropped: list
        .filter((p) => !keptSet.has(p))
        .map((p) => ({ address: p.address, why: explained.dropped?.(p) ?? explained.why })),
    });
    list = next;
  }
  const routedHealthy = list.filter((p) => healthySet.has(p));
  const final = routedHealthy.length > 0 ? routedHealthy : list;
  const result = final.map((p) => p.address);
  const tag = call.attachments?.[ROUTING_TAG_ATTACHMENT] || undefined;
  const last = [...steps].reverse().find((step) => step.kept.length === 0);
  const unhealthy = list.filter((p) => !healthySet.has(p)).map((p) => p.address);
  const outcome =
    all.length === 0
      ? 'no provider is listed'
      : result.length === 0
        ? `no provider: rule ${last?.rule ?? '?'} left none (${last?.why ?? ''})`
        : `${steps.length === 0 ? 'no routing rule: ' : ''}the balancer chooses among ${result.join(', ')}${
            unhealthy.length > 0 && routedHealthy.length > 0
              ? ` (not healthy, left out: ${unhealthy.join(', ')})`
              : ''
          }${routedHealthy.length === 0 ? ' (none healthy: tried anyway)' : ''}`;
  return {
    service: call.service.name,
    method: call.method,
    tag,
    caller: init.caller,
    providers: all.map((p) => ({
      address: p.address,
      healthy: healthySet.has(p),
      labels: p.record?.tags ?? {},
    })),
    steps,
    result,
    outcome,
  };
}
