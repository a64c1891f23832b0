/**
 * `validation` (provider, right before the method): arguments declared with a schema (`methods: { m: {
 * args: z.tuple([...]) } }`, any Standard Schema) are checked, and replaced by what the schema returns; a
 * mismatch is refused with `BadRequest`. Synchronous schemas cost no promise. Only methods that declare
 * a schema have it.
 */
import { defineFilter, type NamedFilter } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import type { ArgumentsSchema } from '../service/service-types.js';
import { createArgumentsValidator } from '../service/validate-arguments.js';

/** An invocation whose arguments the filter may replace (by what the schema returned). */
export interface ValidatedInvocation extends Invocation {
  args: unknown[];
}

/** The validation filter of the method `label`, with its `schema`. */
export function validationFilter(label: string, schema: ArgumentsSchema): NamedFilter<ValidatedInvocation> {
  const validate = createArgumentsValidator(label, schema);
  return defineFilter<ValidatedInvocation>({
    name: 'validation',
    position: 'provider',
    order: FILTER_ORDER.provider.validation,
    step: (next) => (invocation) => {
      const checked = validate(invocation.args);
      if (Array.isArray(checked)) {
        invocation.args = checked;
        return next(invocation);
      }
      return checked.then((args) => {
        invocation.args = args;
        return next(invocation);
      });
    },
  });
}
