/**
 * A method's cluster: its fault-tolerance strategy (`cluster`) over the service's directory, with its
 * balancer, its retry delays and budget, and its per-attempt chain (consumer-chain.ts). Made at the
 * method's first call, when the directory is known.
 */
import type { ClusterInvoker } from '../cluster/cluster.js';
import { type RetryPolicy, resolveRetryOptions } from '../cluster/retry-policy.js';
import { compileChain, type NamedFilter } from '../core/filter.js';
import type { ExtensionTable } from '../extension/extension-registry.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS } from '../loadbalance/load-balancer.js';
import type { RetriesExhaustedMessage } from '../observability/channels.js';
import type { LogFields } from '../observability/logger.js';
import type { ClientInvocation } from './client-invocation.js';
import { awaitWire, createClusterContext } from './cluster-context.js';
import type { ConsumerConfig } from './consumer-options.js';
import type { Directory } from './directory.js';

/** A method's retry delays, from its consumer options (`retry`, `retries`, `retryDelayMs`, `retryMaxDelayMs`). */
export function retryPolicyFor(
  extensions: ExtensionTable,
  config: Pick<ConsumerConfig, 'retry' | 'retries' | 'retryDelayMs' | 'retryMaxDelayMs'>,
): RetryPolicy {
  return extensions.get(
    'retry',
    config.retry,
  )(
    resolveRetryOptions({
      maxAttempts: config.retries + 1,
      baseDelayMs: config.retryDelayMs,
      maxDelayMs: Math.max(config.retryDelayMs, config.retryMaxDelayMs),
    }),
  );
}

/** What a method's cluster is made of. */
export interface MethodClusterInit {
  /** `Service.method`. */
  readonly label: string;
  readonly extensions: ExtensionTable;
  readonly directory: Directory;
  /** The method's resolved consumer options. */
  readonly config: ConsumerConfig;
  /** The method's `hashArguments` (consistent hashing), when set. */
  readonly hashArguments: number[] | undefined;
  /** The per-attempt filters, built-in and user (consumer-chain.ts). */
  readonly attemptFilters: readonly NamedFilter<ClientInvocation>[];
  readonly log: (level: 'info' | 'warn' | 'error', message: string, fields?: LogFields) => void;
  /** The reference's `onRetriesExhausted` hook. */
  readonly onRetriesExhausted?: ((event: RetriesExhaustedMessage) => void) | undefined;
}

export function createMethodCluster(init: MethodClusterInit): ClusterInvoker {
  const { config, extensions } = init;
  const loadBalancer = extensions.get(
    'loadbalance',
    config.loadbalance,
  )({
    ...DEFAULT_LOAD_BALANCER_OPTIONS,
    warmupMs: config.warmupMs,
    effectiveWeight: config.effectiveWeight,
    hashArguments: init.hashArguments ?? DEFAULT_LOAD_BALANCER_OPTIONS.hashArguments,
  });
  const context = createClusterContext({
    label: init.label,
    options: {
      retries: config.retries,
      forks: config.forks,
      sticky: config.sticky,
      failoverOnRateLimited: config.failoverOnRateLimited,
      failbackAttempts: config.failbackAttempts,
      failbackDelayMs: config.failbackDelayMs,
      failbackQueueSize: config.failbackQueueSize,
      hedgeDelayMs: config.hedgeDelayMs,
      hedgePercentile: config.hedgePercentile,
      hedgeBudgetRatio: config.hedgeBudgetRatio,
    },
    directory: init.directory,
    loadBalancer,
    retryPolicy: retryPolicyFor(extensions, config),
    retryBudgetRatio: config.retryBudgetRatio,
    attempt: compileChain<ClientInvocation>(init.attemptFilters, awaitWire),
    log: init.log,
    onRetriesExhausted: init.onRetriesExhausted,
    oneRetryLayer: config.inheritRetry,
  });
  return extensions.get('cluster', config.cluster)(context);
}
