/**
 * Builds the `ClusterContext` a fault-tolerance strategy works with: selection (availability, outlier
 * ejection, exclusion of providers already tried, stickiness, the load balancer) and the call of one
 * provider (deadline budget, counters, health).
 */

import type { ClusterContext, ClusterOptions } from '../cluster/cluster.js';
import { type ErrorCodeName, RpcError } from '../core/rpc-error.js';
import type { LoadBalancer } from '../loadbalance/load-balancer.js';
import { channels } from '../observability/channels.js';
import { observeClientCall } from '../observability/observe-client-call.js';
import { NO_ATTACHMENTS } from '../protocol/metadata.js';
import type { ClientInvocation } from './client-invocation.js';
import type { ConnectionPool } from './connection-pool.js';
import type { WireCall } from './pending-call.js';
import type { ProviderDirectory } from './provider-directory.js';
import type { ProviderEndpoint } from './provider-endpoint.js';

/** What the context needs from an outlier detector. */
export interface HealthTracker {
  /** The endpoints that may be selected now (the same array when none is ejected). */
  filter<E extends { address: string }>(endpoints: readonly E[]): readonly E[];
  /** Records an outcome; `ok` is true for errors that say nothing about the provider's health. */
  record(address: string, ok: boolean): void;
  /**
   * Whether a call may go to `address` now; marks it as going there (hands out the single probe of a
   * half-open provider). `select()` asks it for the provider it picks and picks another on false.
   */
  allow(address: string): boolean;
}

/** What the context needs from retry policy and budget. */
export interface RetryControl {
  /** Delay before attempt `attempt + 1`, or undefined to stop. */
  nextDelayMs(attempt: number, elapsedMs: number): number | undefined;
  /** Records a call, once per call whatever its attempts (for the budget). */
  recordCall(): void;
  /** Takes one retry from the budget; false when the budget is spent. */
  tryAcquireRetry(): boolean;
}

export interface ClusterContextParts {
  label: string;
  options: ClusterOptions;
  directory: ProviderDirectory;
  pool: ConnectionPool;
  loadBalancer: LoadBalancer;
  health: HealthTracker | undefined;
  retry: RetryControl;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** Errors produced before the provider executed anything: safe to send elsewhere, whatever the method. */
const NOT_EXECUTED: ReadonlySet<ErrorCodeName> = new Set(['Shutdown', 'Overloaded', 'ServiceNotFound']);
/**
 * Errors after which an idempotent call may be repeated elsewhere: it may have run (`Shutdown` here is a
 * call the provider interrupted at its shutdown deadline, `details.started`).
 */
const RETRYABLE_IF_IDEMPOTENT: ReadonlySet<ErrorCodeName> = new Set([
  'Network',
  'Timeout',
  'Internal',
  'Shutdown',
]);

export function isRetryable(error: RpcError, idempotent: boolean): boolean {
  if (error.code === 'ProviderError' || error.code === 'Cancelled') return false;
  if (error.neverSent) return true;
  if (error.remote && NOT_EXECUTED.has(error.code) && error.details.started !== true) return true;
  return idempotent && RETRYABLE_IF_IDEMPOTENT.has(error.code);
}

export function createClusterContext(parts: ClusterContextParts): ClusterContext {
  const { directory, pool, loadBalancer, health, retry, options } = parts;
  let stickyEndpoint: ProviderEndpoint | undefined;
  const handleOf = (endpoint: ProviderEndpoint) =>
    (endpoint.handle ??= pool.handle(endpoint.host, endpoint.port, endpoint.transport));

  const selectable = (): readonly ProviderEndpoint[] => {
    const all = directory.list();
    let candidates = all;
    for (let i = 0; i < all.length; i++) {
      if (!handleOf(all[i]!).available) {
        candidates = all.filter((endpoint) => handleOf(endpoint).available);
        break;
      }
    }
    if (health !== undefined) candidates = health.filter(candidates);
    return candidates;
  };

  /** Takes `endpoint` for one call: false when the outlier detector refuses it (ejected, probe out). */
  const claim = (endpoint: ProviderEndpoint): boolean =>
    health === undefined || health.allow(endpoint.address);

  /**
   * The balancer's pick among `candidates`, claimed from the outlier detector; a refused pick is left out
   * and the balancer picks again among the rest. When every candidate refuses (all are ejected, which only
   * the fallback to the whole list can offer), the first pick goes anyway: trying beats failing unsent.
   */
  const pick = (list: readonly ProviderEndpoint[], invocation: ClientInvocation): ProviderEndpoint =>
    list.length === 1 ? list[0]! : loadBalancer.select(list, invocation);

  const choose = (
    candidates: readonly ProviderEndpoint[],
    invocation: ClientInvocation,
  ): ProviderEndpoint => {
    const first = pick(candidates, invocation);
    if (claim(first)) return first;
    let rest = candidates.filter((endpoint) => endpoint !== first);
    while (rest.length > 0) {
      const next = pick(rest, invocation);
      if (claim(next)) return next;
      rest = rest.filter((endpoint) => endpoint !== next);
    }
    return first;
  };

  /** Says which key was asked for and, from the directory, why nothing provides it. */
  const noProvider = (invocation: ClientInvocation): RpcError => {
    const { name, version, group } = invocation.service;
    const key = `service ${name}, version ${version}, ${group ? `group ${group}` : 'no group'}`;
    const why = directory.whyEmpty();
    return new RpcError(
      'NoProvider',
      `no provider available for ${parts.label} (${key})${why ? `: ${why.message}` : ''}`,
      { neverSent: true, details: why?.details ?? { service: name, version, group } },
    );
  };

  return {
    label: parts.label,
    options,
    selectable,
    select(invocation, exclude) {
      let candidates = selectable();
      if (candidates.length === 0) {
        // Everything is backing off or ejected: trying beats failing without a try.
        candidates = directory.list();
        if (candidates.length === 0) throw noProvider(invocation);
      }
      if (exclude !== undefined && exclude.length > 0) {
        const fresh = candidates.filter((endpoint) => !exclude.includes(endpoint));
        if (fresh.length > 0) candidates = fresh;
      }
      if (
        options.sticky &&
        stickyEndpoint !== undefined &&
        candidates.includes(stickyEndpoint) &&
        claim(stickyEndpoint)
      ) {
        return stickyEndpoint;
      }
      const chosen = choose(candidates, invocation);
      if (options.sticky) stickyEndpoint = chosen;
      return chosen;
    },
    invoke(endpoint, invocation) {
      let timeoutMs = 0;
      if (invocation.deadline > 0) {
        timeoutMs = invocation.deadline - Date.now();
        if (timeoutMs <= 0) {
          return Promise.reject(
            new RpcError('Timeout', `${parts.label} ran out of time before a provider was called`),
          );
        }
      }
      invocation.remoteAddress = endpoint.address;
      endpoint.health = health;
      const connection = handleOf(endpoint).connection();
      const tracked = !invocation.oneway;
      const result = new Promise<unknown>((resolve, reject) => {
        let startedAt = 0;
        const attempt: WireCall = {
          route: invocation.route,
          args: invocation.args,
          attachments: invocation.attachments,
          attemptTimeoutMs: timeoutMs,
          signal: invocation.signal,
          oneway: invocation.oneway,
          sent: false,
          responseAttachments: NO_ATTACHMENTS,
          answered(value) {
            if (tracked && this.sent) endpoint.callEnded(performance.now() - startedAt, undefined);
            invocation.responseAttachments = this.responseAttachments;
            resolve(value);
          },
          failed(error) {
            if (tracked && this.sent) endpoint.callEnded(performance.now() - startedAt, error);
            invocation.responseAttachments = this.responseAttachments;
            reject(error);
          },
        };
        connection.send(attempt);
        if (tracked && attempt.sent) {
          startedAt = performance.now();
          endpoint.callStarted();
        }
      });
      return channels.clientCall.hasSubscribers
        ? observeClientCall(result, invocation, endpoint.address)
        : result;
    },
    mayRetry(error, invocation, attempt, startedAt) {
      if (attempt > options.retries || !isRetryable(error, invocation.idempotent)) return undefined;
      if (invocation.deadline > 0 && Date.now() >= invocation.deadline) return undefined;
      if (invocation.signal?.aborted) return undefined;
      const delay = retry.nextDelayMs(attempt, Date.now() - startedAt);
      if (delay === undefined) return undefined;
      if (!retry.tryAcquireRetry()) {
        parts.log('warn', `${parts.label}: retry budget exhausted, not retrying: ${error.message}`);
        return undefined;
      }
      return delay;
    },
    recordCall: () => retry.recordCall(),
    log: parts.log,
  };
}
