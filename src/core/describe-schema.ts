/**
 * Plain-language "what is allowed" for a configuration schema, and the one translation of a schema
 * failure into a ConfigError. Messages are written from the schema (`an integer from 0 to 65535`), not
 * from the validator's own wording, so they read the same whatever failed.
 */
import type { z } from 'zod';
import { ConfigError } from './config-error.js';
import { closestKey } from './did-you-mean.js';

interface CheckDef {
  check: string;
  format?: string;
  value?: number;
  inclusive?: boolean;
  minimum?: number;
}

interface SchemaDef {
  type: string;
  checks?: Array<{ _zod: { def: CheckDef } }>;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  entries?: Record<string, string>;
  innerType?: z.ZodType;
}

const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

const checksOf = (schema: z.ZodType): CheckDef[] => (defOf(schema).checks ?? []).map((c) => c._zod.def);

function describeNumber(schema: z.ZodType): string {
  const checks = checksOf(schema);
  const integer = checks.some((c) => c.check === 'number_format' && /int/.test(c.format ?? ''));
  let min: number | undefined;
  let max: number | undefined;
  let minText = '';
  let maxText = '';
  for (const check of checks) {
    if (check.check === 'greater_than' && check.value !== undefined) {
      min = integer && !check.inclusive ? check.value + 1 : check.value;
      minText = check.inclusive || integer ? `>= ${min}` : `> ${min}`;
    }
    if (check.check === 'less_than' && check.value !== undefined) {
      max = integer && !check.inclusive ? check.value - 1 : check.value;
      maxText = check.inclusive || integer ? `<= ${max}` : `< ${max}`;
    }
  }
  const noun = integer ? 'an integer' : 'a number';
  if (minText.startsWith('>=') && maxText.startsWith('<=')) return `${noun} from ${min} to ${max}`;
  return [noun, minText, maxText].filter(Boolean).join(' ');
}

/** What values `schema` accepts, in words. A schema's `.describe()` text wins. */
export function describeAllowed(schema: z.ZodType): string {
  if (schema.description) return schema.description;
  const def = defOf(schema);
  switch (def.type) {
    case 'number':
      return describeNumber(schema);
    case 'boolean':
      return 'true or false';
    case 'string':
      return checksOf(schema).some((c) => c.check === 'min_length' && (c.minimum ?? 0) > 0)
        ? 'a non-empty string'
        : 'a string';
    case 'enum':
      return `one of ${Object.values(def.entries ?? {}).join(', ')}`;
    case 'array':
      return def.element ? `a list, each ${describeAllowed(def.element)}` : 'a list';
    case 'record':
      return def.valueType ? `a map of names to ${describeAllowed(def.valueType)} values` : 'a map';
    case 'object':
      return `a mapping with the keys ${Object.keys(def.shape ?? {}).join(', ')}`;
    case 'optional':
    case 'default':
      return def.innerType ? describeAllowed(def.innerType) : 'a value';
    default:
      return `a ${def.type}`;
  }
}

/** The schema of the value at `path` inside `schema` (object keys, list positions, map entries). */
export function schemaAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  const unwrap = (at: z.ZodType): z.ZodType => {
    let current = at;
    for (let def = defOf(current); def.innerType && (def.type === 'optional' || def.type === 'default'); ) {
      current = def.innerType;
      def = defOf(current);
    }
    return current;
  };
  let current: z.ZodType | undefined = schema;
  for (const key of path) {
    if (current === undefined) return undefined;
    const def = defOf(unwrap(current));
    if (def.type === 'object') current = def.shape?.[String(key)];
    else if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else return undefined;
  }
  return current;
}

/** Every dotted key `schema` knows, nested objects included (`server`, `server.port`, …). */
export function schemaKeys(schema: z.ZodType, prefix = ''): string[] {
  const def = defOf(schema);
  if (def.type !== 'object') return [];
  return Object.entries(def.shape ?? {}).flatMap(([key, child]) => [
    prefix + key,
    ...schemaKeys(child, `${prefix}${key}.`),
  ]);
}

/** `consumer.timeoutMs`, `registry[0]`. */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

function valueAt(candidate: unknown, path: readonly PropertyKey[]): unknown {
  let value = candidate;
  for (const key of path) {
    value =
      typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return value;
}

export interface IssueContext {
  /** Put before every key in messages, e.g. `refer(example.UserService).`. Default ''. */
  keyPrefix?: string;
  /** Where the value at a dotted key was set. */
  sourceOf?: (key: string) => string | undefined;
  /** More keys a misspelt key may have meant (e.g. options handled outside the schema). */
  extraKeys?: readonly string[];
}

/** The ConfigError for the first issue of a failed parse of `candidate` against `schema`. */
export function configErrorFromIssue(
  schema: z.ZodType,
  candidate: unknown,
  issue: z.core.$ZodIssue,
  context: IssueContext = {},
): ConfigError {
  const prefix = context.keyPrefix ?? '';
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const known = [...schemaKeys(schema), ...(context.extraKeys ?? [])];
    const unknownKey = formatKeyPath([...path, issue.keys[0]!]);
    const suggestion = closestKey(unknownKey, known);
    return ConfigError.unknownKey(prefix + unknownKey, valueAt(candidate, [...path, issue.keys[0]!]), {
      source: context.sourceOf?.(unknownKey),
      suggestion: suggestion === undefined ? undefined : prefix + suggestion,
    });
  }
  const key = formatKeyPath(path);
  const at = schemaAt(schema, path);
  const expected = at ? describeAllowed(at) : issue.message;
  return new ConfigError(prefix + (key || '(root)'), valueAt(candidate, path), expected, {
    source: context.sourceOf?.(key),
  });
}

/** Parses `candidate` with `schema`, throwing the ConfigError of the first problem. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  candidate: unknown,
  context: IssueContext = {},
): z.infer<S> {
  const result = schema.safeParse(candidate);
  if (result.success) return result.data;
  throw configErrorFromIssue(schema, candidate, result.error.issues[0]!, context);
}
