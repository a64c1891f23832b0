/** `withOptions(reference, options)`: per-call options on a typed reference. */
import type { Remote } from '../service/service-types.js';
import type { CallOptions } from './reference-options.js';

/** @internal Where a reference keeps the factory of its views with per-call options. */
export const callOptionsKey = Symbol('callisto.withOptions');

/** @internal */
export type WithOptionsFactory<T> = (options: CallOptions) => Remote<T>;

/**
 * The reference with per-call options, keeping its typed signature:
 * `await withOptions(users, { timeoutMs: 500, signal }).getUser(7)`.
 */
export function withOptions<R extends object>(reference: R, options: CallOptions): R {
  const factory = (reference as Record<symbol, WithOptionsFactory<unknown> | undefined>)[callOptionsKey];
  if (factory === undefined) throw new TypeError('withOptions() needs a reference made by app.refer()');
  return factory(options) as R;
}
