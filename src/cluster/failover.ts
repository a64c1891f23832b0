import { endHooks } from '../core/filter.js';
import { RpcError } from '../core/rpc-error.js';
import { shedReasonOf } from '../core/shed.js';
import {
  type AttemptListener,
  type ClusterContext,
  type ClusterEndpoint,
  type ClusterFactory,
  type ClusterInvocation,
  claimSettleHooks,
} from './cluster.js';
import { sleep } from './sleep.js';

/**
 * failover: on a retryable error try another provider, up to `retries` more times. Only idempotent
 * methods are retried after the request may have reached a provider; any method is retried when the
 * error proves it never did. Business errors are never retried.
 *
 * An attempt refused by the consumer's own adaptive throttling (`details.shed: 'throttled'`) reached no
 * provider and cost none anything, so it is not one of the `retries`: the call moves to another provider
 * at once, without drawing on the retry budget, while an untried one remains (at most one such move per
 * selectable provider, so a call never loops on refusals). Only when every provider refuses does the
 * throttle's refusal count as an attempt like any other.
 *
 * An `Overloaded` refusal (a provider's adaptive limit, or this connection's send queue) says "not here,
 * not now". While another provider can be selected it fails over like any refusal that proves the call
 * never ran. When none can, it is not retried: the retry could only go back to the provider that
 * refused it and add to the load that made it refuse (the open-loop overload bench at 2× its capacity
 * attempted 1.25× the calls offered, the retry budget's share; 1.07× without those retries).
 *
 * One promise per call: attempts report through `attempt()`'s listener, not through promises of their
 * own.
 */
export const failover: ClusterFactory = (context) => (invocation) =>
  new Promise<unknown>((resolve, reject) => {
    context.recordCall();
    // the per-call filters' end hooks run here, as the call settles (no promise of their own)
    const hooks = claimSettleHooks(invocation);
    const call =
      hooks === undefined
        ? new FailoverCall(context, invocation, resolve, reject)
        : new FailoverCall(
            context,
            invocation,
            (value) => {
              endHooks(hooks, invocation, undefined);
              resolve(value);
            },
            (error) => {
              endHooks(hooks, invocation, error);
              reject(error);
            },
          );
    try {
      call.next();
    } catch (error) {
      call.reject(error);
    }
  });

class FailoverCall implements AttemptListener {
  attempts = 0;
  endpoint: ClusterEndpoint | undefined = undefined;
  tried: ClusterEndpoint[] | undefined = undefined;
  /** Attempts refused by adaptive throttling and moved to another provider without counting. */
  throttledMoves = 0;

  constructor(
    readonly context: ClusterContext,
    readonly invocation: ClusterInvocation,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
  ) {}

  next(): void {
    this.attempts++;
    let endpoint: ClusterEndpoint;
    try {
      endpoint = this.context.select(this.invocation, this.tried);
    } catch (error) {
      this.reject(error);
      return;
    }
    this.endpoint = endpoint;
    this.context.attempt(endpoint, this.invocation, this);
  }

  onAnswer(value: unknown): void {
    this.resolve(value);
  }

  onFailure(error: RpcError): void {
    const failure = RpcError.from(error);
    if (shedReasonOf(failure) === 'throttled' && this.#moveOnThrottled()) return;
    if (failure.code === 'Overloaded' && !this.#otherProviderRemains()) {
      this.reject(failure);
      return;
    }
    const delay = this.context.mayRetry(failure, this.invocation, this.attempts);
    if (delay === undefined) {
      this.reject(failure);
      return;
    }
    this.tried ??= [];
    this.tried.push(this.endpoint!);
    if (delay > 0) {
      sleep(delay, this.invocation.signal).then(
        () => this.next(),
        (cancelled: unknown) => this.reject(cancelled),
      );
    } else this.next();
  }

  /** Whether a selectable provider remains besides the one this attempt went to. */
  #otherProviderRemains(): boolean {
    for (const endpoint of this.context.selectable(this.invocation))
      if (endpoint !== this.endpoint) return true;
    return false;
  }

  /** Sends a call whose attempt the throttle refused to an untried provider, when one remains. */
  #moveOnThrottled(): boolean {
    if (this.throttledMoves >= this.context.selectable().length - 1) return false;
    this.throttledMoves++;
    this.attempts--;
    this.tried ??= [];
    this.tried.push(this.endpoint!);
    this.next();
    return true;
  }
}
