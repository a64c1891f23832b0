/**
 * `${VAR}` in configuration files: every string value of a parsed file (YAML, JSON, `.properties`) may
 * name environment variables, substituted after parsing, so a value never becomes structure (a variable
 * holding `a, b: c` stays that text). Forms:
 *
 *   ${VAR}            the variable's value; unset is a ConfigError naming the file, the key and VAR
 *   ${VAR:-default}   the variable's value, or `default` when it is unset or empty
 *   $${               a literal `${`
 *
 * A `$` anywhere else is itself. Keys are never substituted.
 */
import { ConfigError } from '../../core/config-error.js';

/** Something that still reads as a placeholder: `${` … `}`. */
const PLACEHOLDER = /\$\{[^}]*\}/;

/** The value still looks like an unsubstituted placeholder (`${NAME}`, `${NAME:-x}`, `${}`). */
export function looksLikePlaceholder(value: string): boolean {
  return PLACEHOLDER.test(value);
}

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** Where a value was read, for the errors. */
export interface InterpolationSite {
  /** The key path, as errors name it (`server.auth.tokens.orders`, `registry[0]`). */
  readonly key: string;
  /** `file <path>`. */
  readonly source: string;
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** `text` with its placeholders substituted from `env`; throws a ConfigError for an unset one. */
export function interpolate(text: string, env: Environment, site: InterpolationSite): string {
  if (!text.includes('$')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      out += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      out += text[i];
      i++;
      continue;
    }
    const end = text.indexOf('}', i + 2);
    const inner = end === -1 ? undefined : text.slice(i + 2, end);
    const match = inner === undefined || inner.includes('${') ? null : REFERENCE.exec(inner);
    if (match === null) {
      throw new ConfigError(
        site.key,
        text,
        `\${VAR} or \${VAR:-default} with VAR a variable name (letters, digits, _), closed by } (write $\${ for a literal \${)`,
        { source: site.source },
      );
    }
    const [, name, fallback] = match as unknown as [string, string, string | undefined];
    const value = env[name];
    if (fallback !== undefined) {
      out += value === undefined || value === '' ? fallback : value;
    } else if (value === undefined) {
      throw new ConfigError(
        site.key,
        text,
        `the environment variable ${name} set, or a default: \${${name}:-value}`,
        { source: site.source, problem: `\${${name}} names an unset variable` },
      );
    } else {
      out += value;
    }
    i = end + 1;
  }
  return out;
}

type Plain = Record<string, unknown>;

/**
 * Every string in a parsed file's `value` interpolated (keys as they are); `onChanged` may turn a
 * substituted string into the type its key takes (`port: ${PORT:-20880}` is a number).
 */
export function interpolateTree(
  value: unknown,
  env: Environment,
  source: string,
  onChanged: (keyPath: readonly string[], text: string) => unknown,
  keyPath: readonly string[] = [],
): unknown {
  const name = (path: readonly string[]) => path.join('.').replace(/\.\[/g, '[');
  if (typeof value === 'string') {
    const text = interpolate(value, env, { key: name(keyPath), source });
    return text === value ? value : onChanged(keyPath, text);
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => interpolateTree(item, env, source, onChanged, [...keyPath, `[${i}]`]));
  }
  if (typeof value === 'object' && value !== null) {
    const out: Plain = {};
    for (const [key, child] of Object.entries(value)) {
      out[key] = interpolateTree(child, env, source, onChanged, [...keyPath, key]);
    }
    return out;
  }
  return value;
}
