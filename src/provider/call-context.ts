/**
 * The provider's view of the call being served, like Dubbo's RpcContext. `callContext()` returns it
 * during the synchronous part of a method (read it before the first `await`, keep the reference);
 * filters receive the invocation directly. Nothing is paid per call when nobody reads it.
 *
 * With `asyncCallContext: true` the method also runs inside an AsyncLocalStorage holding the
 * invocation, so `callContext()` answers after an `await` too (and in callbacks and timers the method
 * starts). That costs a little per call (docs/observability.md has the figures), so it is opt-in — but
 * an app that refers services turns it on by itself, so that the calls its methods make inherit from
 * the call they serve (docs/cluster.md, "Context across hops"). The holder is core/served-call.ts.
 */
import type { Invocation } from '../core/invocation.js';
import { runServed, runServedAsync, servedCall } from '../core/served-call.js';

/**
 * The invocation being served: during a provider method's synchronous part, or anywhere in its
 * asynchronous continuation with `asyncCallContext`; undefined elsewhere.
 */
export function callContext(): Invocation | undefined {
  return servedCall();
}

/** Runs `fn` with `invocation` as the current call context (its synchronous part). */
export function runInCallContext<R>(invocation: Invocation, fn: () => R): R {
  return runServed(invocation, fn);
}

/** Runs `fn` with `invocation` as the call context of everything it starts, past its awaits. */
export function runInAsyncCallContext<R>(invocation: Invocation, fn: () => R): R {
  return runServedAsync(invocation, fn);
}
