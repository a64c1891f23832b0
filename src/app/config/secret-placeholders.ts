/**
 * A secret is never a placeholder. A `${VAR}` that reached a secret unsubstituted (written in code, in a
 * `CALLISTO_*` variable, or in a file read by an older Callisto) is public text: a provider and a
 * consumer both configured with `${WEB_SERVICE_TOKEN_SECRET}` would authenticate every call with it.
 * So the secrets (security/redact.ts: tokens, JWT secret, credentials, private keys, the admin token)
 * and the passwords in registry addresses (`?password=`, `?sentinelPassword=`) are refused when they
 * still look like one, with a ConfigError naming the key and where it was set.
 */

import { ConfigError } from '../../core/config-error.js';
import { SECRET_CONFIG_KEYS } from '../../security/redact.js';
import type { CallistoConfig } from './callisto-config.js';
import { looksLikePlaceholder } from './interpolate.js';

type Plain = Record<string, unknown>;

const valueAt = (config: unknown, key: string): unknown =>
  key.split('.').reduce<unknown>((node, part) => (node as Plain | undefined)?.[part], config);

const EXPECTED = `a secret, not a placeholder: configuration files substitute \${VAR} from the environment (set VAR); in code and CALLISTO_* variables give the value itself`;

/** Throws a ConfigError for the first secret of `config` that still looks like a `${…}` placeholder. */
export function checkSecretsSubstituted(
  config: CallistoConfig,
  sourceOf: (key: string) => string | undefined,
): void {
  const refuse = (key: string, value: string): never => {
    throw new ConfigError(key, value, EXPECTED, {
      source: sourceOf(key),
      problem: 'an unsubstituted placeholder',
    });
  };
  for (const key of SECRET_CONFIG_KEYS) {
    const value = valueAt(config, key);
    if (typeof value === 'string' && looksLikePlaceholder(value)) refuse(key, value);
    if (typeof value === 'object' && value !== null) {
      for (const [id, secret] of Object.entries(value)) {
        if (typeof secret === 'string' && looksLikePlaceholder(secret)) refuse(`${key}.${id}`, secret);
      }
    }
  }
  config.registry.forEach((address, i) => {
    const queryAt = address.indexOf('?');
    if (queryAt === -1) return;
    for (const [name, value] of new URLSearchParams(address.slice(queryAt + 1))) {
      if (/password/i.test(name) && looksLikePlaceholder(value)) refuse(`registry[${i}]`, address);
    }
  });
}
