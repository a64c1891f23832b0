/**
 * A value a JSON Schema accepts, made from the schema alone (the OpenAPI test builds each request from
 * the document with it): the first enum value or the const, a string/number within its bounds, every
 * tuple item, one list item, every property (optional ones too). `$ref`s resolve inside `document`.
 */
type Schema = Record<string, unknown>;

function resolve(document: Schema, ref: string): Schema {
  if (!ref.startsWith('#/')) throw new Error(`cannot resolve ${ref}`);
  let node: unknown = document;
  for (const part of ref.slice(2).split('/')) {
    node = (node as Schema)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) throw new Error(`${ref} is not in the document`);
  }
  return node as Schema;
}

export function sampleOf(document: Schema, raw: unknown, depth = 0): unknown {
  if (depth > 20) throw new Error('the schema nests too deep for a sample');
  const schema = (raw === true || raw === undefined ? {} : raw) as Schema;
  if (typeof schema['$ref'] === 'string')
    return sampleOf(document, resolve(document, schema['$ref']), depth + 1);
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'][0];
  const union = (schema['anyOf'] ?? schema['oneOf']) as unknown[] | undefined;
  if (union !== undefined) return sampleOf(document, union[0], depth + 1);
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type) {
    case 'string': {
      const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
      return 'sample'.padEnd(min, 'x');
    }
    case 'integer':
    case 'number': {
      const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined;
      const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
      let value = type === 'integer' ? 2 : 2.5;
      if (min !== undefined && value < min) value = min;
      if (max !== undefined && value > max) value = max;
      return value;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const prefix = schema['prefixItems'] as unknown[] | undefined;
      if (prefix !== undefined) return prefix.map((item) => sampleOf(document, item, depth + 1));
      const count = Math.max(1, typeof schema['minItems'] === 'number' ? schema['minItems'] : 0);
      return schema['items'] === undefined
        ? []
        : Array.from({ length: count }, () => sampleOf(document, schema['items'], depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries((schema['properties'] ?? {}) as Schema)) {
        out[key] = sampleOf(document, value, depth + 1);
      }
      if (schema['properties'] === undefined && typeof schema['additionalProperties'] === 'object') {
        out['key'] = sampleOf(document, schema['additionalProperties'], depth + 1);
      }
      return out;
    }
    default:
      return null;
  }
}
