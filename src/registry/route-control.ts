/**
 * The routing half of runtime control (docs/routing.md): list, set and remove a service's routing
 * rules, each change one compare-and-set of its override record (the same record and write path as
 * disable, weight and mock: registry-control.ts), and explain what the rules do with one call against
 * the providers registered now. A rule is checked before it is written (its conditions parsed: a
 * mistake names the character); setting a rule replaces the one of that name, in place.
 */
import type { Attachments } from '../core/invocation.js';
import type { ServiceKey } from '../core/service-key.js';
import { checkRouteRule, ruleClash } from '../routing/check-route-rules.js';
import { ROUTING_TAG_ATTACHMENT, type RouteRule } from '../routing/route-rule.js';
import type { RoutedProvider } from '../routing/router.js';
import { anyTagged, explainRouting, type RouteExplanation } from '../routing/routing-stage.js';
import type { ServiceOverrides } from './override-record.js';
import { type ProviderRecord, providerAddress } from './provider-record.js';

/** One call to explain: what a consumer would send and who it is. */
export interface RouteCallOptions {
  /** The method called (default: the first one the providers declare). */
  readonly method?: string;
  /** The call's routing tag (`callisto-tag`). */
  readonly tag?: string;
  /** The calling application (condition rules' `application`). Default ''. */
  readonly application?: string;
  /** The calling host. Default ''. */
  readonly host?: string;
  /** The caller's zone (zone routing). Default '' (none). */
  readonly zone?: string;
  readonly args?: readonly unknown[];
  readonly attachments?: Attachments;
}

export interface RouteControl {
  /** The routing rules of a service key, in the order stored. */
  routes(key: ServiceKey): Promise<RouteRule[]>;
  /** Adds a rule, or replaces the rule of the same name in place. Throws when it is invalid. */
  setRoute(key: ServiceKey, rule: unknown): Promise<RouteRule>;
  /** Removes the rule `name`; false when there was none. */
  removeRoute(key: ServiceKey, name: string): Promise<boolean>;
  /** What the rules do with one call against the providers registered now (every one taken as healthy). */
  explainRoute(key: ServiceKey, call: RouteCallOptions): Promise<RouteExplanation>;
}

export interface RouteControlParts {
  readOverrides(key: ServiceKey): Promise<ServiceOverrides>;
  /** One compare-and-set change of the record. */
  change(key: ServiceKey, apply: (overrides: ServiceOverrides) => void): Promise<void>;
  /** Throws unless the registry knows the service. */
  ensureKnown(key: ServiceKey): Promise<void>;
  providersOf(key: ServiceKey): Promise<ProviderRecord[]>;
}

/** A registered provider as routing sees it. */
function routedOf(record: ProviderRecord): RoutedProvider {
  return { address: providerAddress(record), host: record.host, port: record.port, record };
}

export function createRouteControl(parts: RouteControlParts): RouteControl {
  return {
    async routes(key) {
      return (await parts.readOverrides(key)).routes ?? [];
    },
    async setRoute(key, value) {
      const rule = checkRouteRule(value);
      await parts.ensureKnown(key);
      await parts.change(key, (overrides) => {
        const routes = [...(overrides.routes ?? [])];
        const at = routes.findIndex((other) => other.name === rule.name);
        const others = routes.filter((_, i) => i !== at);
        const clash = ruleClash(others, rule);
        if (clash !== undefined) throw new Error(clash.replace(/, skipped$/, ''));
        if (at >= 0) routes[at] = rule;
        else routes.push(rule);
        overrides.routes = routes;
      });
      return rule;
    },
    async removeRoute(key, name) {
      let found = false;
      await parts.change(key, (overrides) => {
        const routes = overrides.routes ?? [];
        found = routes.some((rule) => rule.name === name);
        const rest = routes.filter((rule) => rule.name !== name);
        if (rest.length > 0) overrides.routes = rest;
        else delete overrides.routes;
      });
      return found;
    },
    async explainRoute(key, call) {
      const [overrides, records] = await Promise.all([parts.readOverrides(key), parts.providersOf(key)]);
      const disabled = new Set(overrides.disabledProviders);
      const all = overrides.disabled
        ? []
        : records.filter((record) => !disabled.has(providerAddress(record))).map(routedOf);
      const method = call.method ?? records[0]?.methods[0] ?? '';
      return explainRouting({
        rules: overrides.routes ?? [],
        caller: { application: call.application ?? '', host: call.host ?? '', zone: call.zone ?? '' },
        tagged: anyTagged(all),
        all,
        call: {
          service: key,
          method,
          args: call.args ?? [],
          attachments: {
            ...call.attachments,
            ...(call.tag !== undefined ? { [ROUTING_TAG_ATTACHMENT]: call.tag } : {}),
          },
        },
      });
    },
  };
}
