/**
 * `decode` (provider): a request's arguments are decoded here, after the admission filters
 * let the call in (its elements were counted before, without building anything) and before the filters
 * that read them. A body that does not decode is refused with `Serialization` (or `BadRequest` for a
 * body that is no argument list). In-process calls have their arguments already.
 */

import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';

/**
 * What reading `invocation.args` before this filter decoded them throws (a provider filter ordered
 * before it): a TypeError naming the order that sees them.
 */
export function argumentsNotDecoded(label: string): TypeError {
  const decode = FILTER_ORDER.provider.decode;
  return new TypeError(
    `${label}: a provider filter read invocation.args before the \`decode\` filter (order ${decode}) decoded them; give it an order above ${decode} to see the arguments (docs/filters.md, "Order")`,
  );
}

/** An invocation whose arguments may still be encoded (reading `args` before `decodeArguments` throws). */
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
