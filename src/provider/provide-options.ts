/** The options of `app.provide(definition, implementation, options)`. */
import type { FilterEntry } from '../core/filter.js';
import type { ProviderLimits } from '../governance/limit-options.js';
import type { MethodNames } from '../service/service-types.js';
import type { ExecutorOption } from './executor-options.js';

export interface ProvideOptions<T = unknown> {
  /** Provider filters for this service, after the app's (plain functions, or `defineFilter()` ones). */
  filters?: FilterEntry[];
  /** Provider filters, limits and executors of single methods, after the service's. */
  methods?: {
    [K in MethodNames<T>]?: { filters?: FilterEntry[]; limits?: ProviderLimits; executor?: ExecutorOption };
  };
  /**
   * Where the service's methods run: 'loop' (default: the app's event loop) or a pool of worker threads
   * that load the implementation from a module (docs/operations.md). A method's own `executor` wins.
   */
  executor?: ExecutorOption;
  /**
   * Rate and concurrency limits of the service, shared by its methods (docs/governance.md): `rate`,
   * `perApplication`, `perAddress` (token buckets), `executes` (calls executing at once). Default none.
   */
  limits?: ProviderLimits;
  /** Weight announced for this service. Default: server.weight. */
  weight?: number;
  /** Labels announced for this service, merged over server.tags. */
  tags?: Record<string, string>;
}
