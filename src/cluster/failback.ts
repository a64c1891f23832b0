import { RpcError } from '../core/rpc-error.js';
import { callLogFields } from '../observability/logger.js';
import type { ClusterFactory, ClusterInvocation } from './cluster.js';
import { isRetryable } from './retryable.js';

/**
 * failback: one attempt; on failure the call resolves to `undefined` at once and is recorded for
 * background retries with doubling delays (`failbackAttempts`, from `failbackDelayMs`), in a bounded
 * queue (`failbackQueueSize`; when full, the failure is logged and dropped). For notifications that must
 * eventually go out.
 *
 * A failure is retried only when the call may be sent again (cluster/retryable.ts, failover's rule): it
 * was never executed (never sent, refused before running: `Overloaded`, `Shutdown`, `RateLimited`,
 * `NoProvider`, ...), or the method is idempotent. A non-idempotent call that may have run (`Timeout`,
 * `Network` after sending) is never sent again: it is logged at `error` and given up, so it is executed
 * at most once. Business errors reach the caller and are not retried.
 *
 * A background retry never throws into its timer: selecting a provider fails with NoProvider while the
 * list is empty (every provider gone), and that is one more failed retry like any other. A call leaves
 * the queue on every final outcome (delivered, not repeatable, attempts used up, `close()`).
 */
export const failback: ClusterFactory = (context) => {
  let queued = 0;
  let closed = false;
  const timers = new Set<NodeJS.Timeout>();
  /** Whether the call may be sent again after `failure` (a rate limit refused it before it ran). */
  const repeatable = (failure: RpcError, call: ClusterInvocation): boolean =>
    isRetryable(failure, call.idempotent, true);

  const attempt = (call: ClusterInvocation): Promise<unknown> => {
    const fresh = call.renew();
    try {
      return context.invoke(context.select(fresh), fresh);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  const retryLater = (call: ClusterInvocation, retry: number): void => {
    const delay = context.options.failbackDelayMs * 2 ** (retry - 1);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (closed) return;
      attempt(call).then(
        () => {
          queued--;
        },
        (error: unknown) => {
          const failure = RpcError.from(error);
          const attempts = context.options.failbackAttempts;
          if (closed) return;
          if (retry >= attempts || !repeatable(failure, call)) {
            queued--;
            const why =
              retry >= attempts ? `after ${retry} retries` : `at retry ${retry}, ${notRepeatable(call)}`;
            context.log(
              'error',
              `failback: ${context.label} gave up ${why}: ${failure.code}: ${failure.message}`,
              callLogFields(context.label, call),
            );
            return;
          }
          context.log(
            'info',
            `failback: ${context.label} retry ${retry} of ${attempts} failed (${failure.code}: ${failure.message}); next in ${delay * 2} ms`,
            callLogFields(context.label, call),
          );
          retryLater(call, retry + 1);
        },
      );
    }, delay);
    timer.unref();
    timers.add(timer);
  };

  const invoker = async (call: ClusterInvocation): Promise<unknown> => {
    try {
      return await context.invoke(context.select(call), call);
    } catch (error) {
      const failure = RpcError.from(error);
      if (failure.code === 'ProviderError') throw failure;
      if (!repeatable(failure, call)) {
        context.log(
          'error',
          `failback: ${context.label} failed and is not retried, ${notRepeatable(call)}: ${failure.code}: ${failure.message}`,
          callLogFields(context.label, call),
        );
      } else if (closed) {
        context.log(
          'error',
          `failback: ${context.label} failed after close, dropped: ${failure.message}`,
          callLogFields(context.label, call),
        );
      } else if (queued >= context.options.failbackQueueSize) {
        context.log(
          'error',
          `failback: queue full (${context.options.failbackQueueSize}), ${context.label} dropped: ${failure.message}`,
          callLogFields(context.label, call),
        );
      } else {
        queued++;
        context.log(
          'warn',
          `failback: ${context.label} failed, retrying in the background: ${failure.code}: ${failure.message}`,
          callLogFields(context.label, call),
        );
        retryLater(call, 1);
      }
      return undefined;
    }
  };
  return Object.assign(invoker, {
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      queued = 0;
    },
  });
};

/** Why a failed call is not sent again. */
function notRepeatable(call: ClusterInvocation): string {
  return call.idempotent
    ? 'the error rules out a retry'
    : 'it may have run and is not idempotent (declare it idempotent: true to retry it)';
}
