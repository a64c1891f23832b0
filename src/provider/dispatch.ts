/**
 * Runs one call through its method's provider chain, for a call from the wire and an in-process one
 * alike: the hook filters at the chain's head (shutdown, deadline, admission, decode, observe) start in
 * order, the rest runs (user filters, validation, the method), and once it ended the hooks end in
 * reverse order and `done` is told. A synchronous method with hooks only costs no promise.
 */
import { type CompiledChain, endHooks, startHooks } from '../core/filter.js';
import type { ServerInvocation } from './server-invocation.js';

/** Told once how a call ended: `error` (anything thrown), or its result. */
export type DispatchDone = (invocation: ServerInvocation, error: unknown, value: unknown) => void;

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/** What was thrown, never undefined (a handler that throws `undefined` still failed). */
const thrown = (error: unknown): unknown => error ?? new Error('undefined thrown');

export function dispatch(
  chain: CompiledChain<ServerInvocation>,
  invocation: ServerInvocation,
  done: DispatchDone,
): void {
  const hooks = chain.hooks;
  try {
    startHooks(hooks, invocation);
  } catch (error) {
    done(invocation, thrown(error), undefined);
    return;
  }
  let result: unknown;
  try {
    result = chain.rest(invocation);
  } catch (error) {
    endHooks(hooks, invocation, thrown(error));
    done(invocation, thrown(error), undefined);
    return;
  }
  if (!isThenable(result)) {
    endHooks(hooks, invocation, undefined);
    done(invocation, undefined, result);
    return;
  }
  result.then(
    (value) => {
      endHooks(hooks, invocation, undefined);
      done(invocation, undefined, value);
    },
    (error: unknown) => {
      endHooks(hooks, invocation, thrown(error));
      done(invocation, thrown(error), undefined);
    },
  );
}
