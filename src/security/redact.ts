/**
 * Configuration values that are secrets, and a copy of a configuration with them hidden, for anything
 * that shows configuration (`callisto config explain`, an admin `/config` view): the shared-secret
 * tokens' values, the JWT HMAC secret, the consumer's credentials, and a private key given as PEM text
 * (a key's file path is shown), and the credentials written in addresses (`redis://:pw@h`,
 * `etcd://h?password=pw`: see `redactAddress`) wherever a configuration value is an address.
 */

/** The keys whose values are secrets (a map's values, for `server.auth.tokens`). */
export const SECRET_CONFIG_KEYS: readonly string[] = [
  'server.auth.tokens',
  'server.auth.jwtSecret',
  'consumer.credentials',
  'server.tls.key',
  'consumer.tls.key',
  'admin.token',
  'admin.tls.key',
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

/** Query parameters of an address whose values are secrets (`password`, `sentinelPassword`, `token`...). */
const SECRET_PARAMETER = /pass(?:word)?|secret|token|credential/i;

/**
 * `text` with the credentials of any address in it hidden: the password of a `kind://user:password@`
 * (the whole user part when it has no `:`, as `kind://token@host` may be a secret) and the values of
 * query parameters named like a secret (`?password=`, `&sentinelPassword=`, `token`, `secret`,
 * `credentials`), and the password of a `user:password@host` entry quoted without its scheme. Other
 * text is returned as it is, so a message may be passed through whole.
 */
export function redactAddress(text: string): string {
  if (!text.includes('@') && !text.includes('=')) return text;
  return (
    text
      .replace(/(\w[\w+.-]*:\/\/)([^\s/@?#"']*)@/g, (_all, scheme: string, user: string) => {
        const colon = user.indexOf(':');
        return `${scheme}${colon === -1 ? HIDDEN : `${user.slice(0, colon)}:${HIDDEN}`}@`;
      })
      // an address's entry quoted without its scheme ("user:pw@host" is not host:port)
      .replace(/(^|[\s"',])([^\s"',/@:]*):([^\s"'/@]+)@/g, (_all, before: string, user: string) => {
        return `${before}${user}:${HIDDEN}@`;
      })
      .replace(/([?&])([^=&\s#"']+)=([^&\s#"']*)/g, (all, separator: string, name: string) =>
        SECRET_PARAMETER.test(name) ? `${separator}${name}=${HIDDEN}` : all,
      )
  );
}

function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactAddress(value);
  if (Array.isArray(value)) return value.map(redactValue);
  return value;
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
        : redactValue(value);
  }
  return out as T;
}
