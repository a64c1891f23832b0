/**
 * The settable keys of the configuration, from its defaults (callisto-config.ts), and how a string (from
 * a variable, a `.properties` line or a file's `${VAR}`) becomes the type a key takes.
 */
import { splitAddressList } from '../../core/address-list.js';
import { DEFAULT_CONFIG } from './callisto-config.js';

export type Plain = Record<string, unknown>;

export const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys whose value is one object, set whole (never merged key by key): `tags` and `server.auth.tokens` (maps), `limits`. */
export const WHOLE_OBJECT_KEYS = new Set(['tags', 'limits', 'tokens']);

/** Every settable key path, from the defaults. `tags`, `tokens` and `limits` are leaves (set whole). */
function leafPaths(value: Plain, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, child]) =>
    isPlain(child) && !WHOLE_OBJECT_KEYS.has(key) ? leafPaths(child, [...prefix, key]) : [[...prefix, key]],
  );
}

export const LEAVES = leafPaths(DEFAULT_CONFIG as unknown as Plain);
export const LEAF_KEYS = LEAVES.map((leaf) => leaf.join('.'));

function leafDefault(keyPath: readonly string[]): unknown {
  let value: unknown = DEFAULT_CONFIG;
  for (const key of keyPath) value = isPlain(value) ? value[key] : undefined;
  return value;
}

/** A string from a file's `${VAR}` as the number or boolean its key takes (`port: ${PORT:-20880}`). */
export function coerceSubstituted(keyPath: readonly string[], text: string): unknown {
  const fallback = leafDefault(keyPath);
  return typeof fallback === 'number' || typeof fallback === 'boolean' ? coerce([...keyPath], text) : text;
}

/** Turns a string from env or .properties into the type the key expects (invalid values stay strings). */
export function coerce(keyPath: string[], raw: string): unknown {
  const fallback = leafDefault(keyPath);
  const text = raw.trim();
  if (typeof fallback === 'number') return text !== '' && Number.isFinite(Number(text)) ? Number(text) : raw;
  if (typeof fallback === 'boolean') return text === 'true' ? true : text === 'false' ? false : raw;
  if (keyPath.join('.') === 'registry') return splitAddressList(text);
  if (Array.isArray(fallback)) return text === '' ? [] : text.split(',').map((part) => part.trim());
  if (isPlain(fallback)) {
    // an object as JSON (`{"rate":{"perSecond":100}}`), else `k=v,k2=v2` pairs
    if (text.startsWith('{')) {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return raw;
      }
    }
    return Object.fromEntries(
      text
        .split(',')
        .filter(Boolean)
        .map((pair) => pair.split('=').map((part) => part.trim())),
    );
  }
  return raw;
}

export function setPath(target: Plain, keyPath: string[], value: unknown): void {
  let node = target;
  for (const key of keyPath.slice(0, -1)) {
    if (!isPlain(node[key])) node[key] = {};
    node = node[key] as Plain;
  }
  node[keyPath[keyPath.length - 1]!] = value;
}
