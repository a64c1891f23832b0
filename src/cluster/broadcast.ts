import { RpcError } from '../core/rpc-error.js';
import type { ClusterFactory } from './cluster.js';

/**
 * broadcast: call every selectable provider its routing rules leave the call; resolves with the results (one per provider, in order) when
 * all succeed, and fails when any fails, with an error whose `details.failed` lists which providers
 * failed and why. For cache invalidation and similar fan-outs.
 *
 * By design a call goes to each provider once: a non-idempotent method runs once on every provider,
 * never twice on one, and nothing is retried.
 */
export const broadcast: ClusterFactory = (context) => async (call) => {
  const endpoints = context.selectable(call);
  if (endpoints.length === 0) context.select(call); // throws NoProvider
  const outcomes = await Promise.allSettled(
    endpoints.map((endpoint) => context.invoke(endpoint, call.fork(call.signal))),
  );
  const failed = outcomes.flatMap((outcome, i) =>
    outcome.status === 'rejected'
      ? [
          {
            address: endpoints[i]!.address,
            code: RpcError.from(outcome.reason).code,
            message: RpcError.from(outcome.reason).message,
          },
        ]
      : [],
  );
  if (failed.length > 0) {
    const first = RpcError.from(
      (outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason,
    );
    throw new RpcError(
      first.code,
      `broadcast ${context.label}: ${failed.length} of ${endpoints.length} providers failed (${failed.map((f) => `${f.address}: ${f.message}`).join('; ')})`,
      { remote: first.remote, cause: first, details: { failed } },
    );
  }
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value);
};
