import { RpcError } from '../core/rpc-error.js';
import type { ClusterEndpoint, ClusterFactory } from './cluster.js';

/**
 * forking: call `forks` providers at once; the first success wins and the others are cancelled. Fails
 * only when all fail, with the last error. For reads where latency matters more than load.
 *
 * Idempotent methods only: `refer()` refuses it for a method that is not (`idempotentOnly`), and a
 * non-idempotent call that reaches it anyway goes to one provider only, so it is never executed twice.
 */
const forkingFactory: ClusterFactory = (context) => (call) => {
  const chosen: ClusterEndpoint[] = [];
  const forks = call.idempotent
    ? Math.max(1, Math.min(context.options.forks, context.selectable().length))
    : 1;
  try {
    while (chosen.length < forks) chosen.push(context.select(call, chosen));
  } catch (error) {
    return Promise.reject(error);
  }
  return new Promise<unknown>((resolve, reject) => {
    let failures = 0;
    let settled = false;
    const controllers = chosen.map(() => new AbortController());
    const onCallerAbort = () => {
      for (const controller of controllers) controller.abort(call.signal?.reason);
    };
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const done = () => {
      settled = true;
      call.signal?.removeEventListener('abort', onCallerAbort);
    };
    chosen.forEach((endpoint, i) => {
      context.invoke(endpoint, call.fork(controllers[i]!.signal)).then(
        (value) => {
          if (settled) return;
          done();
          const lost = new RpcError('Cancelled', `${context.label}: another provider answered first`);
          controllers.forEach((controller, j) => {
            if (j !== i) controller.abort(lost);
          });
          resolve(value);
        },
        (error: unknown) => {
          failures++;
          if (!settled && failures === chosen.length) {
            done();
            reject(RpcError.from(error));
          }
        },
      );
    });
  });
};

export const forking: ClusterFactory = Object.assign(forkingFactory, { idempotentOnly: true });
