/**
 * The routing stage's extension shape: one `Router` per rule, compiled once per rule change
 * (routing-stage.ts), each narrowing the providers of one call. A router sees the providers left by the
 * routers before it, the call, and the consumer's own identity; nothing else.
 */
import type { Attachments } from '../core/invocation.js';
import type { ServiceKey } from '../core/service-key.js';
import type { RouteKind } from './route-rule.js';

/** What routing reads of a provider's registry record. */
export interface ProviderLabels {
  readonly application: string;
  readonly version: string;
  readonly group: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** A provider as routers see it (a consumer's endpoint, or a record for `route explain`). */
export interface RoutedProvider {
  /** Unique within a list. */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  readonly record: ProviderLabels | undefined;
}

/** What routing reads of a call. */
export interface RouteCall {
  readonly service: ServiceKey;
  readonly method: string;
  readonly args: readonly unknown[];
  readonly attachments: Attachments | undefined;
}

/** The consumer making the calls (condition rules' `application`, `host`, `zone`; zone routing). */
export interface RouteCaller {
  readonly application: string;
  readonly host: string;
  /** '' for none: zone routing then does nothing. */
  readonly zone: string;
}

/** What one router did to one call, for `route explain`. */
export interface RouteStepNote {
  /** Whether the rule changed anything or was consulted at all. */
  readonly applied: boolean;
  /** Why, one sentence. */
  readonly why: string;
  /** Why a dropped provider was dropped (default: `why`). */
  readonly dropped?: (provider: RoutedProvider) => string;
}

export interface RouteScope<P extends RoutedProvider> {
  /**
   * Whether a provider is healthy now (available in the pool, not ejected). Routers that choose by
   * labels (condition, tag) ignore health; the stage drops the unhealthy providers at its end. Weighted
   * splits and zone routing read it to pass on the share of a side or zone that is down.
   */
  readonly isHealthy: (provider: P) => boolean;
  /** Every provider is healthy (`isHealthy` answers true): routers may skip counting. */
  readonly allHealthy: boolean;
  /** Set only when explaining: the router says what it did. */
  readonly note: ((note: RouteStepNote) => void) | undefined;
}

export interface Router {
  readonly name: string;
  readonly kind: RouteKind;
  /**
   * The providers `call` may go to among `providers` (the routable ones left by the routers before,
   * healthy or not): the same array when nothing is dropped; empty when the rule leaves the call none.
   */
  route<P extends RoutedProvider>(
    providers: readonly P[],
    call: RouteCall,
    scope: RouteScope<P>,
  ): readonly P[];
}
