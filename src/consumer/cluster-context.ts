/**
 * The `ClusterContext` a fault-tolerance strategy works with, for one method of one reference:
 * selection through the service's directory (and stickiness), one attempt through the per-attempt chain
 * (Callisto's `deadline`, `observe`, `endpoint-stats`, `outlier`, then the user's attempt filters) to the
 * endpoint's connection, and the retry rules (retryable errors, the method's retry policy, the service's
 * retry budget).
 *
 * An attempt costs no promise when the chain is hooks only: the hooks start here, the call goes to the
 * connection, and the connection's answer ends the hooks and tells the strategy's listener
 * (client-invocation.ts). Wrapping attempt filters, when configured, wait on a promise of the wire.
 */

import type {
  AttemptListener,
  ClusterContext,
  ClusterEndpoint,
  ClusterInvocation,
  ClusterOptions,
} from '../cluster/cluster.js';
import { markRetried, RETRIED_ATTACHMENT, RETRY_ATTACHMENT } from '../cluster/retry-layer.js';
import type { RetryPolicy } from '../cluster/retry-policy.js';
import { isRetryable } from '../cluster/retryable.js';
import { tickMonotonic, tickNow } from '../core/clock.js';
import { type CompiledChain, type Step, startHooks } from '../core/filter.js';
import { RpcError } from '../core/rpc-error.js';
import type { LoadBalancer } from '../loadbalance/load-balancer.js';
import { channels, type RetriesExhaustedMessage } from '../observability/channels.js';
import { callLogFields, type LogFields } from '../observability/logger.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import { ClientInvocation } from './client-invocation.js';
import type { Directory } from './directory.js';
import type { ProviderEndpoint } from './endpoint.js';

export interface ClusterContextParts {
  /** `Service.method`. */
  readonly label: string;
  readonly options: ClusterOptions;
  readonly directory: Directory;
  readonly loadBalancer: LoadBalancer;
  /** The method's retry delays. */
  readonly retryPolicy: RetryPolicy;
  /** The share of calls the service may retry (its directory's retry budget). */
  readonly retryBudgetRatio: number;
  /** The per-attempt chain (see attemptChain). */
  readonly attempt: CompiledChain<ClientInvocation>;
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) => void;
  /** The reference's `onRetriesExhausted` hook. */
  readonly onRetriesExhausted?: ((event: RetriesExhaustedMessage) => void) | undefined;
  /**
   * `inheritRetry`: a failure whose answer says a layer below retried it (`callisto-retried`) is not
   * retried here (cluster/retry-layer.ts). Default true.
   */
  readonly oneRetryLayer?: boolean | undefined;
}

/** The terminal of an attempt chain with wrapping filters: a promise of the wire's answer. */
export const awaitWire: Step<ClientInvocation> = (invocation) =>
  new Promise<unknown>((resolve, reject) => {
    invocation.awaitWire({ onAnswer: resolve, onFailure: reject });
    invocation.attempt.endpoint!.send(invocation);
  });

function ownInvocation(invocation: ClusterInvocation): ClientInvocation {
  if (invocation instanceof ClientInvocation) return invocation;
  throw new TypeError('a cluster strategy passed an invocation it did not get from its invoker');
}

export function createClusterContext(parts: ClusterContextParts): ClusterContext {
  const { directory, loadBalancer, options, retryPolicy } = parts;
  const { hooks, rest } = parts.attempt;
  const wrapped = rest !== awaitWire;
  const budget = directory.retryBudget(parts.retryBudgetRatio);
  let stickyEndpoint: ProviderEndpoint | undefined;
  const hook = parts.onRetriesExhausted;
  const oneRetryLayer = parts.oneRetryLayer ?? true;
  // an overload refuses retries by the thousand: one line per 10 s says so, with how many it left out
  const budgetLog = createRateLimitedLog((message, fields) => parts.log('warn', message, fields));
  // and makes them by the thousand (an outage too): one line per 10 s per error code, the same way
  const retryLog = createRateLimitedLog((message, fields) => parts.log('info', message, fields));

  /** A call with retries failed, none left: the hook and the channel hear it, once per call. */
  const exhausted = (
    error: RpcError,
    invocation: ClusterInvocation,
    attempts: number,
    reason: RetriesExhaustedMessage['reason'],
  ): undefined => {
    if (options.retries === 0 || (hook === undefined && !channels.retriesExhausted.hasSubscribers)) {
      return undefined;
    }
    const event: RetriesExhaustedMessage = {
      service: invocation.service.name,
      method: invocation.method,
      attempts,
      reason,
      error,
      address: invocation.remoteAddress ?? '',
    };
    if (hook !== undefined) {
      try {
        hook(event);
      } catch (thrown) {
        parts.log(
          'warn',
          `${parts.label}: onRetriesExhausted threw: ${RpcError.from(thrown).message}`,
          callLogFields(parts.label, invocation),
        );
      }
    }
    if (channels.retriesExhausted.hasSubscribers) channels.retriesExhausted.publish(event);
    return undefined;
  };

  const attempt = (
    endpoint: ClusterEndpoint,
    invocation: ClusterInvocation,
    listener: AttemptListener,
  ): void => {
    const call = ownInvocation(invocation);
    call.beginAttempt(endpoint as ProviderEndpoint, hooks, listener, tickMonotonic());
    try {
      startHooks(hooks, call);
    } catch (error) {
      call.refuseAttempt(RpcError.from(error));
      return;
    }
    if (!wrapped) {
      call.attempt.endpoint!.send(call);
      return;
    }
    let result: unknown;
    try {
      result = rest(call);
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).then(
      (value) => call.endAttempt(undefined, value),
      (error: unknown) => call.endAttempt(RpcError.from(error), undefined),
    );
  };

  return {
    label: parts.label,
    options,
    selectable: (invocation) =>
      invocation === undefined ? directory.selectable() : directory.routed(invocation),
    select(invocation, exclude) {
      if (
        options.sticky &&
        stickyEndpoint !== undefined &&
        (exclude === undefined || !exclude.includes(stickyEndpoint)) &&
        directory.routed(invocation).includes(stickyEndpoint) &&
        directory.claim(stickyEndpoint)
      ) {
        return stickyEndpoint;
      }
      const chosen = directory.select(
        invocation,
        loadBalancer,
        exclude as readonly ProviderEndpoint[] | undefined,
      );
      if (options.sticky) stickyEndpoint = chosen;
      return chosen;
    },
    attempt,
    invoke(endpoint, invocation) {
      return new Promise<unknown>((resolve, reject) =>
        attempt(endpoint, invocation, { onAnswer: resolve, onFailure: reject }),
      );
    },
    mayRetry(error, invocation, attempts) {
      const call = ownInvocation(invocation);
      // one layer of a chain retries (cluster/retry-layer.ts): not under a retry, not what was retried below
      if (call.underRetry && !error.neverSent) return undefined;
      if (oneRetryLayer && call.attempt.responseAttachments[RETRIED_ATTACHMENT] !== undefined) {
        markRetried(error);
        return undefined;
      }
      const delay = retryDelay(error, call, attempts);
      if (delay === undefined) {
        if (attempts > 1) markRetried(error);
        return undefined;
      }
      call.attachments = { ...call.attachments, [RETRY_ATTACHMENT]: String(attempts + 1) };
      return delay;
    },
    recordCall: () => budget.recordCall(),
    log: parts.log,
  };

  /** The delay before retrying `invocation` after `error` on its attempt `attempts`, or undefined. */
  function retryDelay(error: RpcError, invocation: ClientInvocation, attempts: number): number | undefined {
    if (!isRetryable(error, invocation.idempotent, options.failoverOnRateLimited === true)) {
      return undefined;
    }
    if (attempts > options.retries) return exhausted(error, invocation, attempts, 'attempts');
    const now = tickNow();
    if (invocation.deadline > 0 && now >= invocation.deadline) return undefined;
    if (invocation.signal?.aborted) return undefined;
    const call = invocation;
    call.failedAttemptsMs += tickMonotonic() - call.attempt.startedAt;
    const delay = retryPolicy.nextDelayMs(attempts, now - invocation.startedAt, {
      meanAttemptMs: call.failedAttemptsMs / attempts,
    });
    if (delay === undefined) return exhausted(error, invocation, attempts, 'attempts');
    if (!budget.tryAcquireRetry()) {
      budgetLog.warn(
        'budget',
        `${parts.label}: retry budget exhausted, not retrying: ${error.message}`,
        callLogFields(parts.label, invocation),
      );
      return exhausted(error, invocation, attempts, 'budget');
    }
    retryLog.warn(
      error.code,
      `${parts.label}: attempt ${attempts} failed on ${invocation.remoteAddress ?? '-'} (${error.code}: ${error.message}); retrying in ${delay} ms`,
      callLogFields(parts.label, invocation),
    );
    return delay;
  }
}
