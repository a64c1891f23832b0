/**
 * The consistent-hash key of a call: the arguments at the configured positions, each turned into a
 * stable string and concatenated as Dubbo does. Strings are used as they are; numbers, booleans, bigints,
 * null and undefined by `String()`; objects as JSON with sorted keys, so `{a, b}` and `{b, a}` hash alike.
 */

/** Builds the key from `args` at `positions`; positions past the end are skipped. */
export function hashKey(args: readonly unknown[], positions: readonly number[]): string {
  if (positions.length === 1) {
    const position = positions[0]!;
    return position < args.length ? stableString(args[position]) : '';
  }
  let key = '';
  for (const position of positions) {
    if (position < args.length) key += stableString(args[position]);
  }
  return key;
}

/** A deterministic string form of any value. */
export function stableString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return stableJson(value, new Set());
}

function stableJson(value: unknown, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return `"${value}"`;
    case 'undefined':
    case 'function':
    case 'symbol':
      return 'null';
  }
  if (value === null) return 'null';
  const object = value as object;
  if (seen.has(object)) return '"[Circular]"';
  if (object instanceof Date) return JSON.stringify(object.toJSON());
  if (ArrayBuffer.isView(object))
    return `"${Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString('base64')}"`;
  seen.add(object);
  let out: string;
  if (Array.isArray(object)) {
    out = `[${object.map((item) => stableJson(item, seen)).join(',')}]`;
  } else if (object instanceof Map) {
    const entries = [...object.entries()].map(([k, v]) => [stableString(k), stableJson(v, seen)] as const);
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    out = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
  } else if (object instanceof Set) {
    const items = [...object].map((item) => stableJson(item, seen)).sort();
    out = `[${items.join(',')}]`;
  } else {
    const record = object as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const v = record[key];
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(`${JSON.stringify(key)}:${stableJson(v, seen)}`);
    }
    out = `{${parts.join(',')}}`;
  }
  seen.delete(object);
  return out;
}
