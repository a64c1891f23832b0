/** Types that turn a service interface into its consumer and provider shapes. */

// biome-ignore lint/suspicious/noExplicitAny: function type matching needs any
type AnyFunction = (...args: any[]) => any;

/** Whether a method's result type is a stream's (an AsyncIterable; `never` and `any` are not). */
type IsStream<R> = 0 extends 1 & R
  ? false
  : [R] extends [never]
    ? false
    : [R] extends [AsyncIterable<unknown>]
      ? true
      : false;

/** Names of `T`'s methods. */
export type MethodNames<T> = {
  [K in keyof T]-?: T[K] extends AnyFunction ? K : never;
}[keyof T] &
  string;

/**
 * The consumer's view: every method returns a Promise of its declared result, except a stream method
 * (one declared to return an `AsyncIterable`: a server or two-way stream), which returns the
 * `AsyncIterable` itself, synchronously (the stream opens at its first iteration; docs/streams.md).
 */
export type Remote<T> = {
  readonly [K in MethodNames<T>]: T[K] extends (...args: infer A) => infer R
    ? IsStream<R> extends true
      ? (...args: A) => AsyncIterable<R extends AsyncIterable<infer M> ? M : never>
      : (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * What a provider implements: each method may be sync or async; a stream method (returning an
 * `AsyncIterable`) may be an `async function*` or return any async iterable.
 */
export type Implementation<T> = {
  [K in MethodNames<T>]: T[K] extends (...args: infer A) => infer R
    ? IsStream<R> extends true
      ? (...args: A) => AsyncIterable<R extends AsyncIterable<infer M> ? M : never>
      : (...args: A) => Awaited<R> | Promise<Awaited<R>>
    : never;
};

/**
 * A validator for a method's argument list. Any Standard Schema (zod 3.24+/4, valibot, arktype) fits,
 * as does any object with a zod-style `safeParse`.
 */
export type ArgumentsSchema =
  | {
      readonly '~standard': {
        validate(value: unknown): StandardResult | Promise<StandardResult>;
      };
    }
  | { safeParse(value: unknown): { success: boolean; data?: unknown; error?: unknown } };

export type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<unknown> }> };

/**
 * A schema of a method's result (`returns`): any schema implementing Standard JSON Schema
 * (`'~standard'.jsonSchema`, as zod 4.2+ does). It is read only to describe the method.
 */
export interface ResultSchema {
  readonly '~standard': {
    readonly jsonSchema?: {
      input(options: { target: string }): Record<string, unknown>;
      output(options: { target: string }): Record<string, unknown>;
    };
  };
}
