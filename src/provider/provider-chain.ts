/**
 * The provider chain, as one table: every built-in provider filter, with the condition that puts it in
 * a method's chain. Their orders come from core/filter-order.ts (`FILTER_ORDER.provider`), which sorts
 * the chain; the rows below are listed in that order for the reader. After them run the app's filters
 * (`callisto({ filters.provider })`), the service's and the method's (`provide(…, { filters, methods })`,
 * order 500 unless they say otherwise), then `validation` when the method declares `args` (added by
 * service-table.ts, last before the handler).
 *
 * Adding a built-in provider filter touches its own file in src/filters/, its entry in
 * core/filter-order.ts, and one row here.
 */
import type { NamedFilter } from '../core/filter.js';
import type { FILTER_ORDER } from '../core/filter-order.js';
import { accessLogFilter } from '../filters/access-log.js';
import { accessRulesFilter } from '../filters/access-rules.js';
import { admissionFilter } from '../filters/admission.js';
import { authFilter } from '../filters/auth.js';
import { providerDeadlineFilter } from '../filters/deadline.js';
import { decodeArgumentsFilter } from '../filters/decode-arguments.js';
import { metricsServerFilter } from '../filters/metrics-server.js';
import { observeServerFilter } from '../filters/observe-server.js';
import { registryTokenFilter } from '../filters/registry-token.js';
import { shutdownFilter } from '../filters/shutdown.js';
import { tracingServerFilter } from '../filters/tracing-server.js';
import type { ConcurrencyLimiter } from '../governance/concurrency-limiter.js';
import { createServiceTime } from '../governance/service-time.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsStore } from '../observability/metrics-store.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { ServerAuthOptions } from '../security/auth-options.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { ServerInvocation } from './server-invocation.js';
import type { Serving } from './serving.js';

/** What the built-in filters are made from: the provider's parts and what the app supplies. */
export interface ProviderChainParts {
  readonly serving: Serving;
  readonly logger: Logger;
  /** `server.accessLog`: services whose calls are logged ('*': all). */
  readonly accessLog: readonly string[];
  /** `server.auth` resolved by the app's security (authenticators and access rules), when set. */
  readonly auth?: ServerAuthOptions | undefined;
  /** Where `metrics-server` counts (none: `metrics: false`). */
  readonly metrics?: MetricsStore | undefined;
  /** `server.auth.registryToken`: the token this provider published (none: off). */
  readonly registryToken?: string | undefined;
  /** Whether `tracing-server` is in (`tracing: true` and an OpenTelemetry SDK registered first). */
  readonly tracing: boolean;
  /**
   * `server.deadlineAdmission` (default true): the `deadline` filter of each method learns its service
   * time and refuses calls whose budget is smaller (filters/deadline.ts).
   */
  readonly deadlineAdmission?: boolean | undefined;
  /** The provider's adaptive concurrency limit (`server.adaptiveLimit`), held by `admission`; none: off. */
  readonly limiter?: ConcurrencyLimiter | undefined;
}

/** The method a row is asked about. */
export interface ChainMethod {
  readonly definition: ServiceDefinition<unknown>;
  readonly method: string;
  /** `provide(…, { metrics })`: false leaves the service out of the metrics. */
  readonly metrics: boolean;
}

/**
 * One row: a built-in filter (its name in core/filter-order.ts, where its order and the docs' "when"
 * are), and the filter when it is in a method's chain (undefined: not in it).
 */
interface ChainRow {
  readonly name: keyof typeof FILTER_ORDER.provider;
  readonly filter: (method: ChainMethod) => NamedFilter<ServerInvocation> | undefined;
}

/**
 * The built-in filters of each method: `builtinFiltersOf(method)`. Filters that are the same for every
 * method are made once.
 */
export function createProviderChain(
  parts: ProviderChainParts,
): (method: ChainMethod) => NamedFilter<ServerInvocation>[] {
  const shared =
    <T>(filter: T) =>
    (): T =>
      filter;
  const { accessLog, auth, metrics } = parts;
  const all = accessLog.includes('*');
  const logged = new Set(accessLog);
  const refusals = createRateLimitedLog((message) => parts.logger.warn(message));
  const rows: readonly ChainRow[] = [
    {
      name: 'metrics-server',
      filter: (method) =>
        metrics !== undefined && method.metrics
          ? metricsServerFilter(metrics.method('provider', method.definition, method.method))
          : undefined,
    },
    { name: 'shutdown', filter: shared(shutdownFilter(parts.serving)) },
    {
      name: 'access-log',
      filter: shared(
        accessLog.length === 0
          ? undefined
          : accessLogFilter({
              write: (line, fields) => parts.logger.info(line, fields),
              ...(all ? {} : { services: (service: string) => logged.has(service) }),
            }),
      ),
    },
    {
      name: 'deadline',
      // with deadline-aware admission one per method: each learns its own method's service time
      filter:
        parts.deadlineAdmission === false
          ? shared(providerDeadlineFilter())
          : () => providerDeadlineFilter({ serviceTime: createServiceTime(), limit: parts.limiter }),
    },
    {
      name: 'auth',
      filter: shared(
        auth === undefined
          ? undefined
          : authFilter({
              authenticators: auth.authenticators,
              onRefused: (message) => refusals.warn('auth', message),
            }),
      ),
    },
    {
      name: 'registry-token',
      filter: shared(
        parts.registryToken === undefined ? undefined : registryTokenFilter(parts.registryToken),
      ),
    },
    {
      name: 'access',
      filter: shared(
        auth === undefined
          ? undefined
          : accessRulesFilter({ rules: auth.rules, defaultAccess: auth.defaultAccess }),
      ),
    },
    { name: 'admission', filter: shared(admissionFilter(parts.limiter)) },
    // rate-limit and executes: per method, from the limits of the app, service and method
    // (provider-limits.ts)
    { name: 'decode', filter: shared(decodeArgumentsFilter()) },
    { name: 'observe', filter: shared(observeServerFilter()) },
    {
      name: 'tracing-server',
      filter: shared(parts.tracing ? tracingServerFilter : undefined),
    },
  ];
  return (method) =>
    rows.flatMap((row) => {
      const filter = row.filter(method);
      return filter === undefined ? [] : [filter as NamedFilter<ServerInvocation>];
    });
}
