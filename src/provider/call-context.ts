/**
 * The provider's view of the call being served, like Dubbo's RpcContext. `callContext()` returns it
 * during the synchronous part of a method (read it before the first `await`, keep the reference);
 * filters receive the invocation directly. Nothing is paid per call when nobody reads it.
 */
import type { Invocation } from '../core/invocation.js';

let current: Invocation | undefined;

/** The invocation being served, or undefined outside a provider method's synchronous part. */
export function callContext(): Invocation | undefined {
  return current;
}

/** Runs `fn` with `invocation` as the current call context. */
export function runInCallContext<R>(invocation: Invocation, fn: () => R): R {
  const previous = current;
  current = invocation;
  try {
    return fn();
  } finally {
    current = previous;
  }
}
