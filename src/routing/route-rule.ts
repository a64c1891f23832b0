/**
 * Routing rules as an operator writes them (docs/routing.md): stored in the service's override record
 * (`routes`, registry/override-record.ts), beside the runtime control's overrides, written with
 * compare-and-set, followed by every consumer of the service and applied between discovery and
 * balancing (routing-stage.ts). Four kinds, always applied in this order, whatever order they are listed
 * in (the kinds' precedence):
 *
 *   1. `condition`  Dubbo-style `when => then` rules, in the order listed;
 *   2. `tag`        a call's tag (the `callisto-tag` attachment) to the providers labelled with it;
 *   3. `weight`     weighted splits between groups of providers (90/10), sticky by a key when asked;
 *   4. `zone`       the caller's zone first, spill-over and panic as Envoy's zone-aware routing.
 */

/** The attachment that carries a call's routing tag (`refer(…, { tag })`, `withOptions(ref, { tag })`). */
export const ROUTING_TAG_ATTACHMENT = 'callisto-tag';

/** The provider label (`server.tags.tag`, `provide(…, { tags: { tag } })`) tag routing reads. */
export const TAG_LABEL = 'tag';

/** The provider label (`server.zone`, or `server.tags.zone`) zone routing reads. */
export const ZONE_LABEL = 'zone';

/** The provider label a `version` match reads before the record's service version. */
export const VERSION_LABEL = 'version';

/** Zone routing: the least healthy share of the local zone that keeps every call local. */
export const DEFAULT_ZONE_THRESHOLD = 0.7;

/** Zone routing: below this healthy share of all the providers, zones are ignored (panic). */
export const DEFAULT_PANIC_THRESHOLD = 0.5;

/** Rules of one service at most (a record is bounded anyway). */
export const MAX_ROUTE_RULES = 100;

/** The kinds, in the order a call meets them. */
export const ROUTE_KINDS = ['condition', 'tag', 'weight', 'zone'] as const;

export type RouteKind = (typeof ROUTE_KINDS)[number];

export interface RouteRuleBase {
  /** Unique among the service's rules: `route set` replaces, `route rm` removes by it. */
  readonly name: string;
}

/** `when => then` (Dubbo's condition router); see condition-syntax.ts for the grammar. */
export interface ConditionRule extends RouteRuleBase {
  readonly kind: 'condition';
  /** `method = getUser & application = web => tag = v2`. */
  readonly rule: string;
  /**
   * When `then` matches none of the providers: `true` leaves the call without a provider (NoProvider),
   * `false` (default) ignores the rule for that call.
   */
  readonly force?: boolean;
}

/** Tag routing (always on while a provider carries a `tag` label); this rule tunes it. */
export interface TagRule extends RouteRuleBase {
  readonly kind: 'tag';
  /**
   * `true`: a tagged call goes to providers with its tag or to none, and an untagged call to untagged
   * providers or to none. Default false: each falls back (to untagged providers; to all).
   */
  readonly force?: boolean;
}

/** One side of a weighted split. */
export interface SplitTarget {
  /** The providers of this side, a provider condition (`tag = v2`, `version = 2.*`). */
  readonly to: string;
  /** Its share, an integer from 0 to 10000 (relative to the other sides'). */
  readonly weight: number;
}

export interface WeightRule extends RouteRuleBase {
  readonly kind: 'weight';
  /** Only calls matching this call condition are split (default: every call). */
  readonly when?: string;
  readonly split: readonly SplitTarget[];
  /**
   * A call key (`attachments[user-id]`, `arguments[0]`): calls with the same value always take the same
   * side. Default: none (the sides take turns in proportion, smooth weighted round robin).
   */
  readonly stickyBy?: string;
  /** `true`: a side with no provider left fails its calls (NoProvider). Default false: another side. */
  readonly force?: boolean;
}

export interface ZoneRule extends RouteRuleBase {
  readonly kind: 'zone';
  /**
   * While at least this share (0..1) of the local zone's providers is healthy, every call stays local;
   * below it, a share `healthy/threshold` stays and the rest spills to the other zones. Default 0.7.
   */
  readonly threshold?: number;
  /**
   * Panic: when less than this share (0..1) of all the providers is healthy, zones are ignored and the
   * calls spread over every healthy provider. 0 turns panic off. Default 0.5.
   */
  readonly panicThreshold?: number;
}

export type RouteRule = ConditionRule | TagRule | WeightRule | ZoneRule;
