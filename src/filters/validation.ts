/**
 * `validation` (provider, right before the method): arguments declared with a schema
 * (`methods: { m: { args: z.tuple([...]) } }`, any Standard Schema) are checked, and replaced by what the
 * schema returns; a mismatch is refused with `BadRequest`. Synchronous schemas cost no promise. Only
 * methods that declare a schema have it.
 */

import type { NamedFilter, Step } from '../core/filter.js';
import { FILTER_ORDER } from '../core/filter-order.js';
import type { Invocation } from '../core/invocation.js';
import type { ArgumentsSchema } from '../service/service-types.js';
import { createArgumentsValidator } from '../service/validate-arguments.js';

export const VALIDATION_FILTER = 'validation';

/** The filter's place in the chain; its work is the step `validationStep` builds for each method. */
export const validationFilter: NamedFilter = Object.freeze({
  name: VALIDATION_FILTER,
  position: 'provider',
  order: FILTER_ORDER.provider.validation,
});

/** The validating step before `next`, for the method `label` with `schema`. */
export function validationStep<I extends Invocation>(
  label: string,
  schema: ArgumentsSchema,
): (next: Step<I>) => Step<I> {
  const validate = createArgumentsValidator(label, schema);
  return (next) => (invocation) => {
    const checked = validate(invocation.args);
    if (Array.isArray(checked)) {
      (invocation as { args: unknown[] }).args = checked;
      return next(invocation);
    }
    return checked.then((args) => {
      (invocation as { args: unknown[] }).args = args;
      return next(invocation);
    });
  };
}
