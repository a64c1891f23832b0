/**
 * `provide(definition, implementation, options)`: the options object is checked when the service is
 * provided, like `refer()`'s: an unknown key (plain JavaScript has no compiler to catch `limts`) fails
 * with a `ConfigError` naming the key, the closest known one and every option there is.
 */
import { ConfigError } from '../core/config-error.js';
import { refuseUnknownKeys } from '../core/did-you-mean.js';
import { PROVIDE_PROTOCOLS, PROVIDE_SCOPES, type ProvideOptions } from './provide-options.js';

/** The keys `ProvideOptions` has (provide-options.ts). */
export const PROVIDE_OPTION_KEYS = [
  'filters',
  'methods',
  'executor',
  'limits',
  'weight',
  'tags',
  'scope',
  'registries',
  'protocols',
  'metrics',
] as const;
/** Fails to compile when ProvideOptions gains a key the list above does not name, or the other way round. */
type SameKeys<A, B> = [Exclude<A, B> | Exclude<B, A>] extends [never] ? true : never;
const provideKeysComplete: SameKeys<keyof ProvideOptions, (typeof PROVIDE_OPTION_KEYS)[number]> = true;
void provideKeysComplete;
/** The keys of one entry under `methods`. */
export const PROVIDE_METHOD_OPTION_KEYS = ['filters', 'limits', 'executor'] as const;

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Throws a `ConfigError` for the first key of `options` (or of a method's options) that does not exist. */
export function checkProvideOptions(service: string, options: unknown): void {
  const source = `code, provide(${service}) options`;
  if (options === undefined) return;
  if (!isPlain(options)) {
    throw new ConfigError(`provide(${service}) options`, options, 'an object of provide() options', {
      source,
    });
  }
  refuseUnknownKeys(options, PROVIDE_OPTION_KEYS, { prefix: '', source });
  checkServedOptions(options, source);
  const methods = options['methods'];
  if (methods === undefined) return;
  if (!isPlain(methods)) {
    throw new ConfigError('methods', methods, 'a mapping of method names to method options', { source });
  }
  for (const [method, methodOptions] of Object.entries(methods)) {
    if (methodOptions === undefined) continue;
    if (!isPlain(methodOptions)) {
      throw new ConfigError(`methods.${method}`, methodOptions, 'an object of method options', { source });
    }
    refuseUnknownKeys(methodOptions, PROVIDE_METHOD_OPTION_KEYS, { prefix: `methods.${method}.`, source });
  }
}

/** `scope`, `protocols`, `registries` (their shape; the registries are matched by the provider) and `metrics`. */
function checkServedOptions(options: Record<string, unknown>, source: string): void {
  const { scope, protocols, registries, metrics } = options;
  if (scope !== undefined && !PROVIDE_SCOPES.includes(scope as never)) {
    throw new ConfigError('scope', scope, `one of ${PROVIDE_SCOPES.map((s) => `'${s}'`).join(', ')}`, {
      source,
    });
  }
  if (metrics !== undefined && typeof metrics !== 'boolean') {
    throw new ConfigError('metrics', metrics, 'true or false', { source });
  }
  if (protocols !== undefined) {
    const expected = `a list of ${PROVIDE_PROTOCOLS.map((p) => `'${p}'`).join(', ')}`;
    if (!Array.isArray(protocols) || protocols.length === 0)
      throw new ConfigError('protocols', protocols, `${expected}, at least one`, { source });
    protocols.forEach((protocol, i) => {
      if (!PROVIDE_PROTOCOLS.includes(protocol as never))
        throw new ConfigError(`protocols[${i}]`, protocol, expected, { source });
    });
  }
  if (registries !== undefined) {
    if (!Array.isArray(registries))
      throw new ConfigError('registries', registries, "a list of the app's registry addresses", { source });
    registries.forEach((registry, i) => {
      if (typeof registry !== 'string')
        throw new ConfigError(`registries[${i}]`, registry, "one of the app's registry addresses", {
          source,
        });
    });
  }
}
