import type { ClientInvocation } from '../client/client-invocation.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import type { ClusterFactory } from './cluster.js';

/**
 * failback: one attempt; on failure the call resolves to `undefined` at once and is recorded for
 * background retries with doubling delays (`failbackAttempts`, from `failbackDelayMs`), in a bounded
 * queue (`failbackQueueSize`; when full, the failure is logged and dropped). For notifications that must
 * eventually go out. Business errors are not retried.
 */
export const failback: ClusterFactory = (context) => {
  let queued = 0;
  const timers = new Set<NodeJS.Timeout>();
  const retryLater = (call: ClientInvocation, attempt: number): void => {
    const delay = context.options.failbackDelayMs * 2 ** (attempt - 1);
    const timer = setTimeout(() => {
      timers.delete(timer);
      const fresh = call.renew();
      context.invoke(context.select(fresh), fresh).then(
        () => {
          queued--;
        },
        (error: unknown) => {
          const failure = RpcError.from(error);
          if (attempt >= context.options.failbackAttempts || failure.code === 'ProviderError') {
            queued--;
            context.log(
              'error',
              `failback: ${context.label} gave up after ${attempt} retries: ${failure.message}`,
            );
          } else retryLater(call, attempt + 1);
        },
      );
    }, delay);
    timer.unref();
    timers.add(timer);
  };
  const invoker = async (invocation: Invocation): Promise<unknown> => {
    const call = invocation as ClientInvocation;
    try {
      return await context.invoke(context.select(call), call);
    } catch (error) {
      const failure = RpcError.from(error);
      if (failure.code === 'ProviderError') throw failure;
      if (queued >= context.options.failbackQueueSize) {
        context.log('error', `failback: queue full, ${context.label} dropped: ${failure.message}`);
      } else {
        queued++;
        context.log(
          'warn',
          `failback: ${context.label} failed, retrying in the background: ${failure.message}`,
        );
        retryLater(call, 1);
      }
      return undefined;
    }
  };
  return Object.assign(invoker, {
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  });
};
