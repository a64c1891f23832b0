/**
 * The fault-tolerance extension point (kind `cluster`). A strategy is one function that builds an
 * invoker from a `ClusterContext`: it decides how many providers to try and how, while the context knows
 * how to pick one (the service's directory: availability, outlier ejection, load balancing) and how to
 * make one attempt (the per-attempt filters, then the connection).
 *
 * Everything a strategy touches is typed here: the call (`ClusterInvocation`), a provider
 * (`ClusterEndpoint`), an attempt's outcome (`AttemptListener`). Strategies need no cast.
 */
import type { Hook } from '../core/filter.js';
import type { Attachments, Invocation } from '../core/invocation.js';
import type { RpcError } from '../core/rpc-error.js';
import type { Endpoint } from '../loadbalance/load-balancer.js';
import type { LogFields } from '../observability/logger.js';

export interface ClusterOptions {
  /** failover: extra attempts after the first. */
  retries: number;
  /** forking: providers called at once. */
  forks: number;
  /** failback: failed calls kept for background retry. */
  failbackQueueSize: number;
  /** failback: background attempts per call. */
  failbackAttempts: number;
  /** failback: delay before the first background retry, doubled each time. */
  failbackDelayMs: number;
  /** Keep using the provider that served the previous call while it is healthy. */
  sticky: boolean;
  /** Retry elsewhere when a provider answers RateLimited (default false: the caller sees it). */
  failoverOnRateLimited?: boolean;
  /** hedging: the wait before the second attempt, ms; 0 (default): the observed latency at `hedgePercentile`. */
  hedgeDelayMs?: number;
  /** hedging: the percentile of the method's observed latencies it waits for. Default 95. */
  hedgePercentile?: number;
  /** hedging: hedges allowed as a share of the method's calls over 10 s. Default 0.1. */
  hedgeBudgetRatio?: number;
}

/** A call as a strategy sees it: an invocation that can be repeated. */
export interface ClusterInvocation extends Invocation {
  /** The call's whole time budget, ms (0 for none); `deadline` is its start plus this. */
  readonly timeoutMs: number;
  /** When the call started, ms (Date.now clock). */
  readonly startedAt: number;
  /** The last attempt's answer attachments (none until an attempt was answered). */
  responseAttachments: Attachments;
  /** The same call with a fresh deadline and no signal, for background retries (failback). */
  renew(): ClusterInvocation;
  /** The same call, deadline included, with its own signal (forking, broadcast, hedging: one per provider). */
  fork(signal: AbortSignal | undefined): ClusterInvocation;
  /**
   * Made while a provider method serves a retry (the inherited `callisto-retry` marker): one attempt
   * only, so a strategy sends no second one (cluster/retry-layer.ts). Undefined: false.
   */
  readonly underRetry?: boolean | undefined;
  /**
   * @internal The per-call filters' end hooks, for a strategy that settles the call itself to run just
   * before it settles (claimSettleHooks): then the per-call position adds no promise of its own.
   */
  settleHooks?: readonly Hook<ClusterInvocation>[] | undefined;
}

/** What `settleHooks` holds once a strategy claimed them. */
export const CLAIMED_SETTLE_HOOKS: readonly Hook<ClusterInvocation>[] = Object.freeze([]);

/**
 * Takes the invocation's per-call end hooks, which the strategy then runs as the call settles, just
 * before it resolves or rejects (consumer/call-chain.ts leaves them to it when it claimed them in the
 * same run as the call started; otherwise it runs them itself, after the strategy's promise).
 */
export function claimSettleHooks(
  invocation: ClusterInvocation,
): readonly Hook<ClusterInvocation>[] | undefined {
  const hooks = invocation.settleHooks;
  if (hooks === undefined || hooks === CLAIMED_SETTLE_HOOKS) return undefined;
  invocation.settleHooks = CLAIMED_SETTLE_HOOKS;
  return hooks;
}

/** A provider as a strategy sees it. */
export interface ClusterEndpoint extends Endpoint {
  readonly host: string;
  readonly port: number;
  /** The transport the consumer connects with (`tcp`, `memory`, `injvm` for in-process calls). */
  readonly transport: string;
}

/** Told how one attempt ended, synchronously when it could not even be sent. */
export interface AttemptListener {
  onAnswer(value: unknown): void;
  onFailure(error: RpcError): void;
}

export interface ClusterContext {
  /** `Service.method`, for messages. */
  readonly label: string;
  readonly options: ClusterOptions;
  /**
   * Picks one provider, avoiding `exclude` while others remain, and claims it from the outlier detector
   * (a half-open provider's single probe). Throws NoProvider when there is none.
   */
  select(invocation: ClusterInvocation, exclude?: readonly ClusterEndpoint[]): ClusterEndpoint;
  /**
   * Every provider selectable now (not ejected, not unreachable, not going away); with `invocation`,
   * those of them its routing rules leave it (docs/routing.md): what broadcast calls.
   */
  selectable(invocation?: ClusterInvocation): readonly ClusterEndpoint[];
  /** One attempt on `endpoint`, through the per-attempt filters; resolves with its result. */
  invoke(endpoint: ClusterEndpoint, invocation: ClusterInvocation): Promise<unknown>;
  /** `invoke` without a promise: how the attempt ended is told to `listener`. */
  attempt(endpoint: ClusterEndpoint, invocation: ClusterInvocation, listener: AttemptListener): void;
  /**
   * Whether a failed attempt may be repeated on another provider: the delay before it, or undefined.
   * Counts the retry against the service's retry budget. `attempt` is the number of attempts made.
   */
  mayRetry(error: RpcError, invocation: ClusterInvocation, attempt: number): number | undefined;
  /** Counts one call (not attempt) towards the retry budget; strategies that retry call it once per call. */
  recordCall(): void;
  /** A line through the reference's logger; `fields` for a line about one call (`callLogFields`). */
  log(level: 'info' | 'warn' | 'error', message: string, fields?: LogFields): void;
}

/** A strategy's invoker; `close` releases background work (failback timers). */
export type ClusterInvoker = ((invocation: ClusterInvocation) => Promise<unknown>) & { close?(): void };

/**
 * Builds a strategy's invoker. A factory that sends one call to several providers at once (`forking`)
 * says so with `idempotentOnly: true`: `refer()` then refuses it, with a ConfigError, for a method that
 * is not idempotent (a non-idempotent call is never executed twice, by any strategy).
 */
export type ClusterFactory = ((context: ClusterContext) => ClusterInvoker) & {
  readonly idempotentOnly?: boolean;
};

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    cluster: ClusterFactory;
  }
}
