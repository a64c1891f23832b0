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
  /**
   * Who is served (Dubbo's `scope`): `'both'` (default) the app's own consumers in-process and remote
   * callers; `'local'` in-process only, never registered; `'remote'` remote callers only (the app's own
   * consumers call it over the wire too); `'none'` nobody, never registered.
   */
  scope?: ProvideScope;
  /**
   * The registries the service is registered in: addresses of the app's `registry` list. Default: every
   * registry of the app.
   */
  registries?: string[];
  /**
   * The entries the service is served on: `'callisto'` (the RPC port), `'http'` (the HTTP/JSON entry,
   * `server.http`) and `'grpc'` (the gRPC entry, `server.grpc`); written in its provider record.
   * Default: every entry the server has.
   */
  protocols?: ProvideProtocol[];
  /** false: the service's calls are counted in neither the metrics nor `/stats`. Default true. */
  metrics?: boolean;
}

/** `provide(…, { scope })`. */
export type ProvideScope = 'local' | 'remote' | 'both' | 'none';
export const PROVIDE_SCOPES: readonly ProvideScope[] = ['local', 'remote', 'both', 'none'];

/** `provide(…, { protocols })`: the provider's entries. */
export type ProvideProtocol = 'callisto' | 'http' | 'grpc';
export const PROVIDE_PROTOCOLS: readonly ProvideProtocol[] = ['callisto', 'http', 'grpc'];
