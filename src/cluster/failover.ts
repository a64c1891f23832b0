import type { ClientInvocation } from '../consumer/client-invocation.js';
import type { ProviderEndpoint } from '../consumer/provider-endpoint.js';
import { RpcError } from '../core/rpc-error.js';
import type { ClusterFactory } from './cluster.js';
import { sleep } from './sleep.js';

/**
 * failover: on a retryable error try another provider, up to `retries` more times. Only idempotent
 * methods are retried after the request may have reached a provider; any method is retried when the
 * error proves it never did. Business errors are never retried.
 */
export const failover: ClusterFactory = (context) => async (invocation) => {
  const call = invocation as ClientInvocation;
  const startedAt = Date.now();
  context.recordCall();
  let tried: ProviderEndpoint[] | undefined;
  for (let attempt = 1; ; attempt++) {
    const endpoint = context.select(call, tried);
    try {
      return await context.invoke(endpoint, call);
    } catch (error) {
      const failure = RpcError.from(error);
      const delay = context.mayRetry(failure, call, attempt, startedAt);
      if (delay === undefined) throw failure;
      if (delay > 0) await sleep(delay, call.signal);
      tried ??= [];
      tried.push(endpoint);
    }
  }
};
