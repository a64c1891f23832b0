/** Types that turn a service interface into its consumer and provider shapes. */

// biome-ignore lint/suspicious/noExplicitAny: function type matching needs any
type AnyFunction = (...args: any[]) => any;

/** Names of `T`'s methods. */
export type MethodNames<T> = {
  [K in keyof T]-?: T[K] extends AnyFunction ? K : never;
}[keyof T] &
  string;

/** The consumer's view: every method returns a Promise of its declared result. */
export type Remote<T> = {
  readonly [K in MethodNames<T>]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** What a provider implements: each method may be sync or async. */
export type Implementation<T> = {
  [K in MethodNames<T>]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Awaited<R> | Promise<Awaited<R>>
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
