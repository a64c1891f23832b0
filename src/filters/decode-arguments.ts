/**
 * `decode` (provider): a request's arguments are decoded here, after the admission filters
 * let the call in (its elements were counted before, without building anything) and before the filters
 * that read them. A body that does not decode is refused with `Serialization` (or `BadRequest` for a
 * body that is no argument list). In-process calls have their arguments already.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';

/** An invocation whose arguments may still be encoded. */
export interface EncodedInvocation extends Invocation {
  /** Decodes the arguments into `args`, once; throws an RpcError for a body that does not decode. */
  decodeArguments(): void;
}

export function decodeArgumentsFilter(): NamedFilter<EncodedInvocation> {
  return defineFilter<EncodedInvocation>({
    name: 'decode',
    position: 'provider',
    order: FILTER_ORDER.provider.decode,
    start(invocation) {
      invocation.decodeArguments();
    },
  });
}
