/**
 * `admission` (provider): the concurrency limit. A call's arguments are counted (elements,
 * without decoding them: a body over `maxDecodedElements` is refused with `Serialization`), then the call
 * takes an execution slot and its elements from the provider's limits (`maxConcurrentCalls`,
 * `maxElementsInFlight`, and the fair shares per connection and per remote address,
 * provider/peer-limits.ts) or is refused with `Overloaded`, naming the limit; it gives them back when it
 * ends. The arguments are decoded only after it (the `decode` filter), so a refused call costs no
 * decoding.
 *
 * With the adaptive concurrency limit (`server.adaptiveLimit`, on by default; governance/
 * concurrency-limiter.ts) a call first takes a place under the provider's learnt limit, by its priority,
 * before its arguments are even counted, or — only while the provider is overloaded (governance/
 * overload-gate.ts) — is refused `Overloaded` (`details.shed: 'limit'`, never run). The calls that ended with a result or with their handler's own error (not an RpcError: not a
 * refusal, a timeout or a cancellation, whose durations say nothing about the provider's speed) teach the
 * limit how long they took.
 */

import { tickMonotonic } from '../core/clock.js';
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';
import { shedError } from '../core/shed.js';
import type { CallPriority } from '../governance/call-priority.js';
import type { ConcurrencyLimiter } from '../governance/concurrency-limiter.js';

/** One caller's hold on the limits (a connection's, or the in-process caller's). */
export interface Admission {
  /** Takes a slot and `elements`; returns why not, or undefined when admitted. */
  admit(elements: number): string | undefined;
  release(elements: number): void;
}

/** What the filter reads of a provider's invocation. */
export interface AdmittedInvocation extends Invocation {
  readonly admission: Admission;
  /**
   * Counts the elements the arguments decode into, without decoding them, and keeps the count in
   * `elements`; throws an RpcError for a body over a limit or malformed.
   */
  measureArguments(): number;
  /** What `measureArguments` counted. */
  readonly elements: number;
  /** The call's priority under the adaptive limit (read only near the limit). */
  readonly priority: CallPriority;
  /** performance.now() when the adaptive limit admitted the call. */
  limitedAt: number;
}

const priorityOf = (invocation: AdmittedInvocation): CallPriority => invocation.priority;

export function admissionFilter(limiter?: ConcurrencyLimiter): NamedFilter<AdmittedInvocation> {
  if (limiter !== undefined) return adaptiveAdmissionFilter(limiter);
  return defineFilter<AdmittedInvocation>({
    name: 'admission',
    position: 'provider',
    order: FILTER_ORDER.provider.admission,
    start(invocation) {
      const refused = invocation.admission.admit(invocation.measureArguments());
      if (refused !== undefined) throw new RpcError('Overloaded', refused);
    },
    end(invocation) {
      invocation.admission.release(invocation.elements);
    },
  });
}

function adaptiveAdmissionFilter(limiter: ConcurrencyLimiter): NamedFilter<AdmittedInvocation> {
  return defineFilter<AdmittedInvocation>({
    name: 'admission',
    position: 'provider',
    order: FILTER_ORDER.provider.admission,
    start(invocation) {
      const now = tickMonotonic();
      if (!limiter.acquire(priorityOf, invocation, now)) throw limitRefusal(invocation, limiter);
      invocation.limitedAt = now;
      let refused: string | undefined;
      try {
        refused = invocation.admission.admit(invocation.measureArguments());
      } catch (error) {
        limiter.release(undefined, now);
        throw error;
      }
      if (refused !== undefined) {
        limiter.release(undefined, now);
        throw new RpcError('Overloaded', refused);
      }
    },
    end(invocation, error) {
      invocation.admission.release(invocation.elements);
      if (error !== undefined && RpcError.is(error)) {
        limiter.release(undefined, tickMonotonic());
        return;
      }
      const startedAt = invocation.limitedAt;
      let at = tickMonotonic();
      // a call that ended in the run it started in (a synchronous method) reads the clock itself
      if (at === startedAt) at = performance.now();
      limiter.release(at - startedAt, at);
    },
  });
}

function limitRefusal(invocation: AdmittedInvocation, limiter: ConcurrencyLimiter): RpcError {
  return shedError(
    'Overloaded',
    `${invocation.service.name}.${invocation.method}: the provider has ${limiter.inflight} calls in flight, at its adaptive limit of ${limiter.limit} for ${invocation.priority} calls while overloaded (server.adaptiveLimit); not run`,
    'limit',
    { details: { limit: limiter.limit, inflight: limiter.inflight, priority: invocation.priority } },
  );
}
