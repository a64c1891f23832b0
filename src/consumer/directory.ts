/**
 * One service's directory: everything the consumer knows about the providers of one service key (from
 * one source: direct addresses, registries, or the app itself in-process).
 *
 * - **The list**: records from the source (for registries: their lists merged, the snapshot, empty-list
 *   protection, registry-lists.ts), turned into endpoints kept by address across updates, so their
 *   counters survive membership changes; the connection pool is told which addresses are wanted.
 * - **Health**: the service's outlier detector (shared by every method and reference of the service) and
 *   its retry budget.
 * - **Overrides**: an operator's runtime control from the registry (directory-overrides.ts): disabled
 *   providers (or the whole service) are left out of selection, weights replaced, mock switches kept
 *   for the reference's methods. Calls in flight are not touched.
 * - **Routing**: the service's routing rules (from the override record, docs/routing.md) compiled into a
 *   routing stage once per change (routing/routing-stage.ts), narrowing the selectable endpoints of each
 *   call before the balancer; skipped entirely (one `undefined` check) when the service has no rule and
 *   no provider carries a `tag` label. `explain(call)` says what each rule did to one call.
 * - **Selection**: the endpoints selectable now (not disabled, available in the pool, not ejected), the balancer's pick
 *   claimed from the detector (a half-open provider's single probe), and why there is none (NoProvider
 *   names the key, the registries asked and what they hold).
 *
 * Every call reads `list()`: no registry round trip per call.
 */

import {
  createOutlierDetector,
  type OutlierDetector,
  type OutlierDetectorOptions,
} from '../cluster/circuit-breaker.js';
import { createRetryBudget, type RetryBudget } from '../cluster/retry-budget.js';
import { tickNow } from '../core/clock.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import type { LoadBalancer } from '../loadbalance/load-balancer.js';
import type { MockMode, ServiceOverrides } from '../registry/override-record.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import type { RouteRule } from '../routing/route-rule.js';
import type { RouteCall, RouteCaller } from '../routing/router.js';
import {
  anyTagged,
  compileRouting,
  explainRouting,
  type RouteExplanation,
  type RoutingStage,
} from '../routing/routing-stage.js';
import type { ConnectionPool } from './connection-pool.js';
import { createDirectoryOverrides } from './directory-overrides.js';
import { type EndpointLink, ProviderEndpoint } from './endpoint.js';
import { DEFAULT_REFERENCE_PROTOCOL, type ReferenceProtocol, recordThrough } from './reference-protocol.js';

/** Why a directory has no provider: one readable sentence and the same as data. */
export interface EmptyReason {
  readonly message: string;
  readonly details: Record<string, unknown>;
}

export type DirectoryListener = (
  added: readonly ProviderEndpoint[],
  removed: readonly ProviderEndpoint[],
  /** Kept endpoints whose record now comes from a new provider process (another pid or start time). */
  renewed: readonly ProviderEndpoint[],
) => void;

/** Where a directory's records come from (directory-feed.ts builds the registry one). */
export interface DirectoryFeed {
  /** Resolves once the first list is known. */
  readonly ready: Promise<void>;
  /**
   * Starts feeding: `update` with every new list, and `override` with the operator's overrides of the
   * service (runtime control) whenever they change, when the source has them.
   */
  start(
    update: (records: readonly ProviderRecord[]) => void,
    override?: (overrides: ServiceOverrides) => void,
  ): void;
  /** Why the list is empty, when the source can tell. */
  whyEmpty(): EmptyReason | undefined;
  /** The list changed (the feed may look up what the registries hold for NoProvider). */
  changed?(empty: boolean): void;
  close(): Promise<void>;
}

export interface Directory {
  readonly key: ServiceKey;
  /** Resolves once the first provider list is known (at once for direct addresses). */
  readonly ready: Promise<void>;
  readonly isReady: boolean;
  /** Current endpoints (the same array until the membership changes). */
  list(): readonly ProviderEndpoint[];
  /**
   * The endpoints selectable now: not disabled by an operator's override, available, and not ejected
   * by the outlier detector (if any).
   */
  selectable(): readonly ProviderEndpoint[];
  /**
   * The selectable endpoints the routing rules leave `call` (the selectable ones when the service has
   * no rule): what a broadcast calls and a sticky provider must stay among.
   */
  routed(call: RouteCall): readonly ProviderEndpoint[];
  /** Whether an operator's override disabled `endpoint` (or the whole service). */
  isDisabled(endpoint: ProviderEndpoint): boolean;
  /** The operator's overrides in force (runtime control), if the source has any. */
  readonly overrides: ServiceOverrides | undefined;
  /** The mock switches of the overrides by method, undefined when there are none (the common case). */
  readonly mocks: ReadonlyMap<string, MockMode> | undefined;
  /**
   * Picks a provider with `balancer`, avoiding `exclude` while others remain; claims it from the outlier
   * detector. Throws NoProvider (never sent) when the list is empty.
   */
  select(
    invocation: Invocation,
    balancer: LoadBalancer,
    exclude?: readonly ProviderEndpoint[],
  ): ProviderEndpoint;
  /** Claims `endpoint` from the detector; false when the detector refuses it (ejected, probe out). */
  claim(endpoint: ProviderEndpoint): boolean;
  /** The service's outlier detector, created by the first reference that enables detection. */
  outlierDetector(options: Partial<OutlierDetectorOptions>): OutlierDetector;
  /** The detector, if one was created (admin and tests). */
  readonly detector: OutlierDetector | undefined;
  /** The service's retry budget, created by the first reference with its ratio. */
  retryBudget(ratio: number): RetryBudget;
  /** Why there is no provider (for NoProvider). */
  whyEmpty(): EmptyReason | undefined;
  /** Called after every membership change. */
  onChange(listener: DirectoryListener): () => void;
  /** The compiled routing stage, undefined when the service has none (selection then skips it). */
  readonly routing: RoutingStage | undefined;
  /** The routing rules in force (from the override record). */
  readonly routes: readonly RouteRule[];
  /** What the routing stage does with one call: each rule, and why each provider was kept or dropped. */
  explain(call: RouteCall): RouteExplanation;
  /**
   * A heartbeat round trip to `address` was measured, with the load report its pong carried: both feed
   * the latency- and load-aware balancers.
   */
  recordRtt(address: string, rttMs: number, load?: string): void;
  /** Stops following the source and releases the pool's connections. Idempotent. */
  close(): Promise<void>;
}

export interface DirectoryParts {
  readonly key: ServiceKey;
  readonly feed: DirectoryFeed;
  /** How an endpoint is reached: a pool handle, or the in-process provider. */
  readonly link: (record: ProviderRecord) => EndpointLink;
  /** The pool to tell which addresses are wanted (none in-process). */
  readonly pool?: ConnectionPool;
  /**
   * What the references of this directory call through (default `callisto`): records are taken as that
   * protocol reaches them (an `http` one at the record's HTTP entry), and skipped when it cannot.
   */
  readonly protocol?: ReferenceProtocol;
  /** Reports overrides naming no current provider (logged and skipped). */
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** The consumer, as routing rules see it (`application`, `host`, `zone`). Default: no zone, no name. */
  readonly caller?: RouteCaller;
}

/** The balancer's pick among `list` (the only one, without asking it). No closure per call: this is hot. */
function pick(
  list: readonly ProviderEndpoint[],
  invocation: Invocation,
  balancer: LoadBalancer,
): ProviderEndpoint {
  return list.length === 1 ? list[0]! : balancer.select(list, invocation);
}

/**
 * `candidates` without the providers a call already tried, unless that leaves none. Out of `select` so
 * that `select` holds no closure (a closure there costs a context per call).
 */
function untried(
  candidates: readonly ProviderEndpoint[],
  exclude: readonly ProviderEndpoint[],
): readonly ProviderEndpoint[] {
  const fresh = candidates.filter((endpoint) => !exclude.includes(endpoint));
  return fresh.length > 0 ? fresh : candidates;
}

/** Whether `next` was written by another provider process than `previous` at the same address. */
function isNewIncarnation(previous: ProviderRecord | undefined, next: ProviderRecord): boolean {
  return previous !== undefined && (previous.pid !== next.pid || previous.startTime !== next.startTime);
}

export function createDirectory(parts: DirectoryParts): Directory {
  const { key, feed, pool } = parts;
  const protocol = parts.protocol ?? DEFAULT_REFERENCE_PROTOCOL;
  let endpoints: readonly ProviderEndpoint[] = [];
  /** `endpoints` without the ones an override disabled (the same array when none is). */
  let routable: readonly ProviderEndpoint[] = endpoints;
  const overrides = createDirectoryOverrides(key, parts.log ?? (() => {}));
  const listeners = new Set<DirectoryListener>();
  let detector: OutlierDetector | undefined;
  let budget: RetryBudget | undefined;
  let isReady = false;
  let closed: Promise<void> | undefined;
  const caller: RouteCaller = parts.caller ?? { application: '', host: '', zone: '' };
  let rules: readonly RouteRule[] = [];
  let rulesText = '[]';
  let tagged = false;
  /** Undefined while there is nothing to route (the common case): select() then skips the stage. */
  let routing: RoutingStage | undefined;
  const compile = (): void => {
    try {
      routing = compileRouting({ rules, caller, tagged });
    } catch (error) {
      // rules are checked where read; a rule that still fails to compile is not applied
      routing = undefined;
      parts.log?.('error', `routing rules of ${key.name} not applied: ${(error as Error).message}`);
    }
  };

  const update = (records: readonly ProviderRecord[]): void => {
    const previous = new Map(endpoints.map((endpoint) => [endpoint.address, endpoint]));
    const next: ProviderEndpoint[] = [];
    const added: ProviderEndpoint[] = [];
    const renewed: ProviderEndpoint[] = [];
    for (const listed of records) {
      // a provider that does not serve this service over the directory's protocol (only its HTTP
      // entry, say, or no HTTP entry for an HTTP reference)
      const record = recordThrough(listed, protocol);
      if (record === undefined) continue;
      const address = ProviderEndpoint.addressOf(record);
      const existing = previous.get(address);
      if (existing === undefined && next.some((endpoint) => endpoint.address === address)) continue;
      if (existing) {
        if (isNewIncarnation(existing.record, record)) renewed.push(existing);
        existing.weight = record.weight;
        existing.startTime = record.startTime;
        existing.record = record;
        next.push(existing);
        previous.delete(address);
      } else {
        const endpoint = ProviderEndpoint.fromRecord(record, parts.link(record));
        next.push(endpoint);
        added.push(endpoint);
      }
    }
    endpoints = next;
    routable = overrides.apply(endpoints, true);
    if (anyTagged(endpoints) !== tagged) {
      tagged = !tagged;
      compile();
    }
    const removed = [...previous.values()];
    if (pool !== undefined) {
      for (const endpoint of added) pool.retain(endpoint.host, endpoint.port, endpoint.transport);
      for (const endpoint of removed) pool.release(endpoint.address);
      for (const endpoint of renewed) pool.renew(endpoint.address);
    }
    if (detector !== undefined) for (const endpoint of removed) detector.forget(endpoint.address);
    feed.changed?.(endpoints.length === 0);
    for (const listener of listeners) listener(added, removed, renewed);
  };

  const selectable = (): readonly ProviderEndpoint[] => {
    const all = routable;
    let candidates = all;
    for (let i = 0; i < all.length; i++) {
      if (!all[i]!.available) {
        candidates = all.filter((endpoint) => endpoint.available);
        break;
      }
    }
    return detector === undefined ? candidates : detector.filter(candidates);
  };

  const claim = (endpoint: ProviderEndpoint): boolean =>
    detector === undefined || detector.allow(endpoint.address);

  /**
   * The balancer's pick among `candidates`, claimed from the outlier detector; a refused pick is left out
   * and the balancer picks again among the rest. When every candidate refuses (all are ejected, which only
   * the fallback to the whole list can offer), the first pick goes anyway: trying beats failing unsent.
   */
  const choose = (
    candidates: readonly ProviderEndpoint[],
    invocation: Invocation,
    balancer: LoadBalancer,
  ): ProviderEndpoint => {
    const first = pick(candidates, invocation, balancer);
    if (claim(first)) return first;
    let rest = candidates.filter((endpoint) => endpoint !== first);
    while (rest.length > 0) {
      const next = pick(rest, invocation, balancer);
      if (claim(next)) return next;
      rest = rest.filter((endpoint) => endpoint !== next);
    }
    return first;
  };

  /** Says which key was asked for and, from the source, why nothing provides it. */
  const noProvider = (invocation: Invocation): RpcError => {
    const { name, version, group } = key;
    const what = `service ${name}, version ${version}, ${group ? `group ${group}` : 'no group'}`;
    const why = (endpoints.length > 0 ? overrides.whyNone() : undefined) ?? feed.whyEmpty();
    return new RpcError(
      'NoProvider',
      `no provider available for ${name}.${invocation.method} (${what})${why ? `: ${why.message}` : ''}`,
      { neverSent: true, details: why?.details ?? { service: name, version, group } },
    );
  };

  /** Why a call has no provider after routing: the rule that left it none. */
  const noRoute = (invocation: Invocation): RpcError => {
    const explained = explainRouting({ rules, caller, tagged, call: invocation, all: routable });
    const { name, version, group } = key;
    return new RpcError('NoProvider', `no provider for ${name}.${invocation.method}: ${explained.outcome}`, {
      neverSent: true,
      details: { service: name, version, group, routing: explained.steps },
    });
  };

  feed.start(update, (next) => {
    overrides.set(next);
    routable = overrides.apply(endpoints, false);
    const nextRules = next.routes ?? [];
    const text = JSON.stringify(nextRules);
    if (text !== rulesText) {
      rules = nextRules;
      rulesText = text;
      compile();
    }
  });
  const ready = feed.ready.then(
    () => {
      isReady = true;
    },
    () => {
      isReady = true;
    },
  );

  return {
    key,
    ready,
    get isReady() {
      return isReady;
    },
    list: () => endpoints,
    selectable,
    routed(call) {
      const candidates = selectable();
      if (routing === undefined || routable.length === 0) return candidates;
      return routing.route(routable, call, candidates);
    },
    isDisabled: (endpoint) => overrides.isDisabled(endpoint),
    get overrides() {
      return overrides.current;
    },
    get mocks() {
      return overrides.mocks;
    },
    select(invocation, balancer, exclude) {
      let candidates = selectable();
      if (routing !== undefined) {
        // the rules choose among every routable provider; the unhealthy are dropped after them
        if (routable.length === 0) throw noProvider(invocation);
        candidates = routing.route(routable, invocation, candidates);
        if (candidates.length === 0) throw noRoute(invocation);
      } else if (candidates.length === 0) {
        // Everything is backing off or ejected: trying beats failing without a try.
        candidates = routable;
        if (candidates.length === 0) throw noProvider(invocation);
      }
      if (exclude !== undefined && exclude.length > 0) candidates = untried(candidates, exclude);
      return choose(candidates, invocation, balancer);
    },
    claim,
    outlierDetector(options) {
      detector ??= createOutlierDetector({ now: tickNow, ...options });
      return detector;
    },
    get detector() {
      return detector;
    },
    retryBudget(ratio) {
      budget ??= createRetryBudget({ ratio, now: tickNow });
      return budget;
    },
    whyEmpty: () => feed.whyEmpty(),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get routing() {
      return routing;
    },
    get routes() {
      return rules;
    },
    explain: (call) => explainRouting({ rules, caller, tagged, call, all: routable, healthy: selectable() }),
    recordRtt(address, rttMs, load) {
      for (const endpoint of endpoints) {
        if (endpoint.address !== address) continue;
        endpoint.stats.recordLatency(rttMs);
        if (load !== undefined) endpoint.stats.reportLoad(load);
      }
    },
    close() {
      closed ??= (async () => {
        await feed.close();
        if (pool !== undefined) for (const endpoint of endpoints) pool.release(endpoint.address);
        listeners.clear();
      })();
      return closed;
    },
  };
}
