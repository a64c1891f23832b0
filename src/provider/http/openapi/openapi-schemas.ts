/**
 * A method's JSON Schemas as OpenAPI 3.1 components: each schema document becomes one component, its
 * `$defs` components of their own (`$ref`s rewritten: inside an OpenAPI document `#` is the document),
 * `$schema` dropped, and what the schema library could not say (json-schema-of.ts' marks) any value. A
 * schema larger than `MAX_SCHEMA_BYTES` is replaced by any value with a note, so one method cannot make
 * the document unbounded.
 */
import { type JsonSchema, jsonSchemaOf, UNREPRESENTABLE, VOID } from '../../../service/json-schema-of.js';

/** Largest JSON text of one schema document in the OpenAPI document; a larger one is left out. */
export const MAX_SCHEMA_BYTES = 256 * 1024;

type Schema = Record<string, unknown>;

/** What a schema document became: the component it is, or the reason it is not there. */
export type SchemaComponent =
  | { readonly kind: 'component'; readonly ref: string; readonly void: boolean }
  | { readonly kind: 'none'; readonly note: string | undefined };

/** A component name OpenAPI accepts (`^[a-zA-Z0-9._-]+$`). */
export function componentName(text: string): string {
  return text.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * Adds the JSON Schema of `schema` (`io`: a caller's input, or the method's output) to `components`
 * under `name`; `none` (with why, when the library failed) when the schema offers no JSON Schema.
 */
export function addSchemaComponent(
  components: Record<string, unknown>,
  name: string,
  schema: unknown,
  io: 'input' | 'output',
): SchemaComponent {
  if (schema === undefined) return { kind: 'none', note: undefined };
  let json: JsonSchema | undefined;
  try {
    json = jsonSchemaOf(schema, io);
  } catch (error) {
    return { kind: 'none', note: `its schema cannot be written as JSON Schema: ${(error as Error).message}` };
  }
  if (json === undefined) return { kind: 'none', note: undefined };
  const root = typeof json === 'boolean' ? {} : json;
  const isVoid = root[VOID] === true;
  const size = JSON.stringify(root).length;
  if (size > MAX_SCHEMA_BYTES) {
    return { kind: 'none', note: `its schema (${size} bytes) is larger than ${MAX_SCHEMA_BYTES} bytes` };
  }
  const defs = (root['$defs'] ?? {}) as Record<string, JsonSchema>;
  const defName = (key: string) => componentName(`${name}.${key}`);
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (typeof value !== 'object' || value === null) return value;
    const node = value as Schema;
    if (node[UNREPRESENTABLE] !== undefined) {
      return { description: `any value (in the tagged JSON format): ${String(node[UNREPRESENTABLE])}` };
    }
    const out: Schema = {};
    for (const [key, item] of Object.entries(node)) {
      if (key === '$schema' || key === '$defs' || key === VOID) continue;
      if (key === '$ref' && typeof item === 'string') {
        out[key] =
          item === '#'
            ? `#/components/schemas/${name}`
            : item.startsWith('#/$defs/')
              ? `#/components/schemas/${defName(decodeURIComponent(item.slice('#/$defs/'.length)))}`
              : item;
        continue;
      }
      // `properties` and the like hold names, not keywords: their values are schemas
      out[key] = rewrite(item);
    }
    return out;
  };
  for (const [key, def] of Object.entries(defs)) components[defName(key)] = rewrite(def);
  components[name] = rewrite(root);
  return { kind: 'component', ref: `#/components/schemas/${name}`, void: isVoid };
}
