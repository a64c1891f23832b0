/**
 * `admission` (provider): the concurrency limit. A call's arguments are counted (elements,
 * without decoding them: a body over `maxDecodedElements` is refused with `Serialization`), then the call
 * takes an execution slot and its elements from the provider's limits (`maxConcurrentCalls`,
 * `maxElementsInFlight`, and the fair shares per connection and per remote address,
 * provider/peer-limits.ts) or is refused with `Overloaded`, naming the limit; it gives them back when it
 * ends. The arguments are decoded only after it (the `decode` filter), so a refused call costs no
 * decoding.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import { RpcError } from '../core/rpc-error.js';

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
}

export function admissionFilter(): NamedFilter<AdmittedInvocation> {
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
