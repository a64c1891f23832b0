/**
 * Configuration values that are secrets, and a copy of a configuration with them hidden, for anything
 * that shows configuration (`callisto config explain`, an admin `/config` view): the shared-secret
 * tokens' values, the JWT HMAC secret, the consumer's credentials, and a private key given as PEM text
 * (a key's file path is shown).
 */

/** The keys whose values are secrets (a map's values, for `server.auth.tokens`). */
export const SECRET_CONFIG_KEYS: readonly string[] = [
  'server.auth.tokens',
  'server.auth.jwtSecret',
  'consumer.credentials',
  'server.tls.key',
  'consumer.tls.key',
  'admin.token',
];

/** What a hidden value shows. */
export const HIDDEN = '(hidden)';

type Plain = Record<string, unknown>;
const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function hide(key: string, value: unknown): unknown {
  if (key.endsWith('.tokens') && isPlain(value)) {
    return Object.fromEntries(Object.keys(value).map((id) => [id, HIDDEN]));
  }
  if (typeof value !== 'string' || value === '') return value;
  if (key.endsWith('tls.key')) return value.includes('-----BEGIN') ? HIDDEN : value;
  return HIDDEN;
}

/** A copy of `config` (the app's configuration, or any part of it under `prefix`) with secrets hidden. */
export function redactConfig<T>(config: T, prefix = ''): T {
  if (!isPlain(config)) return config;
  const out: Plain = {};
  for (const [key, value] of Object.entries(config)) {
    const path = `${prefix}${key}`;
    out[key] = SECRET_CONFIG_KEYS.includes(path)
      ? hide(path, value)
      : isPlain(value)
        ? redactConfig(value, `${path}.`)
        : value;
  }
  return out as T;
}
