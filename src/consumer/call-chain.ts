/**
 * The per-call position: a method's call filters (the app's, the reference's, the method's, and `mock`
 * with `mock: 'fail'`) around its cluster strategy, and the mock answers of `mock` modes.
 */
import { CLAIMED_SETTLE_HOOKS, type ClusterInvocation } from '../cluster/cluster.js';
import { type CompiledChain, endHooks, type Hook, startHooks } from '../core/filter.js';
import type { Invoker } from '../core/invocation.js';
import type { MethodDeclaration } from '../service/define-service.js';
import type { ClientInvocation } from './client-invocation.js';

/** Runs a compiled per-call chain: its hook filters around the rest, which returns a promise. */
export function runCallChain(chain: CompiledChain<ClientInvocation>): Invoker {
  const { hooks, rest } = chain;
  if (hooks.length === 0) return rest as Invoker;
  if (hooks.every((hook) => hook.end === undefined)) {
    // start hooks only (a consumer rate limit): nothing to run after the call, so no promise of ours
    return (invocation) => {
      try {
        startHooks(hooks, invocation as ClientInvocation);
        return Promise.resolve(rest(invocation as ClientInvocation));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  // offered to the strategy only when nothing wraps it: a wrapping filter (cache, mock fallback) may
  // still change the outcome after the strategy settled
  const settleHooks = chain.direct ? (hooks as readonly Hook<ClusterInvocation>[]) : undefined;
  return (invocation) => {
    const call = invocation as ClientInvocation;
    try {
      startHooks(hooks, call);
    } catch (error) {
      return Promise.reject(error);
    }
    let result: unknown;
    // a strategy that settles the call itself (failover) claims the end hooks and runs them as it
    // settles: no promise of ours (cluster/cluster.ts, claimSettleHooks)
    call.settleHooks = settleHooks;
    try {
      result = rest(call);
    } catch (error) {
      if (call.settleHooks === CLAIMED_SETTLE_HOOKS) return Promise.reject(error);
      call.settleHooks = undefined;
      endHooks(hooks, call, error);
      return Promise.reject(error);
    }
    if (call.settleHooks === CLAIMED_SETTLE_HOOKS) return result as Promise<unknown>;
    // not claimed in this run (a mock answered, the directory was not ready, another strategy): none
    // may claim them later; they run after the promise
    call.settleHooks = undefined;
    return Promise.resolve(result).then(
      (value) => {
        endHooks(hooks, call, undefined);
        return value;
      },
      (error: unknown) => {
        endHooks(hooks, call, error);
        throw error;
      },
    );
  };
}

/**
 * The mock answer of `method`: the reference's `mockImpl`, else the method's declared `mock`, else
 * `undefined`.
 */
export function mockAnswer(
  mockImpl: object | undefined,
  method: string,
  declaration: MethodDeclaration,
): (args: unknown[]) => unknown {
  const implementation = mockImpl as
    | Record<string, ((...args: unknown[]) => unknown) | undefined>
    | undefined;
  const fromImpl = implementation?.[method];
  if (fromImpl) return (args) => fromImpl.apply(implementation, args);
  const fromDeclaration = declaration.mock as ((...args: unknown[]) => unknown) | undefined;
  if (fromDeclaration) return (args) => fromDeclaration(...args);
  return () => undefined;
}
