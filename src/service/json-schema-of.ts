/**
 * The JSON Schema (draft 2020-12) of a method's argument or result schema, through the Standard JSON
 * Schema interface (`schema['~standard'].jsonSchema`, zod 4.2+, and libraries that implement it). What
 * JSON Schema cannot say is marked rather than refused, so each user decides: `UNREPRESENTABLE` holds the
 * library's reason (a Date, a bigint), `VOID` marks a result of nothing (`z.void()`, `z.undefined()`).
 * Used by the `.proto` export (service/proto/) and the HTTP entry's OpenAPI document.
 */

/** A JSON Schema: an object, or `true`/`false`. */
export type JsonSchema = { readonly [key: string]: unknown } | boolean;

/** The Standard JSON Schema converter a schema carries. */
export interface StandardJsonSchemaConverter {
  input(options: { target: string; libraryOptions?: Record<string, unknown> }): Record<string, unknown>;
  output(options: { target: string; libraryOptions?: Record<string, unknown> }): Record<string, unknown>;
}

/** Marks a place the library could not write as JSON Schema; its value is the library's reason. */
export const UNREPRESENTABLE = 'x-callisto-unrepresentable';
/** Marks a result of nothing (`undefined`). */
export const VOID = 'x-callisto-void';

/** The converter of `schema`, when it has one. */
function converterOf(schema: unknown): StandardJsonSchemaConverter | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const standard = (schema as { '~standard'?: { jsonSchema?: unknown } })['~standard'];
  const converter = standard?.jsonSchema as Partial<StandardJsonSchemaConverter> | undefined;
  return typeof converter?.input === 'function' && typeof converter.output === 'function'
    ? (converter as StandardJsonSchemaConverter)
    : undefined;
}

/** zod's `unrepresentable` hook: marks instead of throwing (other libraries ignore the option). */
function mark(context: { zodSchema?: unknown; message?: string }): Record<string, unknown> {
  const kind = (context.zodSchema as { _zod?: { def?: { type?: string } } } | undefined)?._zod?.def?.type;
  if (kind === 'void' || kind === 'undefined') return { [VOID]: true };
  return { [UNREPRESENTABLE]: context.message ?? 'cannot be represented in JSON Schema' };
}

/**
 * The JSON Schema of `schema`'s input (what a caller sends: arguments) or output (what the method
 * returns), or undefined when the schema offers none. Throws what the library throws.
 */
export function jsonSchemaOf(schema: unknown, io: 'input' | 'output'): JsonSchema | undefined {
  const converter = converterOf(schema);
  if (converter === undefined) return undefined;
  const options = { target: 'draft-2020-12', libraryOptions: { unrepresentable: mark } };
  return io === 'input' ? converter.input(options) : converter.output(options);
}
