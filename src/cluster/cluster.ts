/**
 * The fault-tolerance extension point (kind `cluster`). A strategy is one function that builds an
 * invoker from a `ClusterContext`: it decides how many providers to try and how, while the context
 * knows how to pick one (routing, outlier ejection, load balancing) and how to call it.
 */

import type { ClientInvocation } from '../consumer/client-invocation.js';
import type { ProviderEndpoint } from '../consumer/provider-endpoint.js';
import type { Invoker } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';

export interface ClusterOptions {
  /** failover: extra attempts after the first. Default 2. */
  retries: number;
  /** forking: providers called at once. Default 2. */
  forks: number;
  /** failback: failed calls kept for background retry. Default 1000. */
  failbackQueueSize: number;
  /** failback: background attempts per call. Default 3. */
  failbackAttempts: number;
  /** failback: delay before the first background retry, doubled each time. Default 1000. */
  failbackDelayMs: number;
  /** Keep using the provider that served the previous call while it is healthy. Default false. */
  sticky: boolean;
}

export const DEFAULT_CLUSTER_OPTIONS: ClusterOptions = {
  retries: 2,
  forks: 2,
  failbackQueueSize: 1_000,
  failbackAttempts: 3,
  failbackDelayMs: 1_000,
  sticky: false,
};

export interface ClusterContext {
  /** `Service.method`, for messages. */
  readonly label: string;
  readonly options: ClusterOptions;
  /**
   * Picks one provider, avoiding `exclude` while others remain, and claims it from the outlier detector
   * (a half-open provider's single probe). Throws NoProvider when there is none.
   */
  select(invocation: ClientInvocation, exclude?: readonly ProviderEndpoint[]): ProviderEndpoint;
  /** Every provider selectable now (not ejected, not unreachable, not going away). */
  selectable(): readonly ProviderEndpoint[];
  /** Calls one provider, keeping its counters and health. */
  invoke(endpoint: ProviderEndpoint, invocation: ClientInvocation): Promise<unknown>;
  /** Whether a failed attempt may be repeated on another provider, retry budget included. */
  mayRetry(
    error: RpcError,
    invocation: ClientInvocation,
    attempt: number,
    startedAt: number,
  ): number | undefined;
  /** Counts one call (not attempt) towards the retry budget; strategies that retry call it once per call. */
  recordCall(): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
}

/** A strategy's invoker; `close` releases background work (failback timers). */
export type ClusterInvoker = Invoker & { close?(): void };

export type ClusterFactory = (context: ClusterContext) => ClusterInvoker;

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    cluster: ClusterFactory;
  }
}
