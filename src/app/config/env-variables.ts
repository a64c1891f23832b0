/**
 * The `CALLISTO_<KEY>` environment variables: one per settable key (`CALLISTO_SERVER_PORT`,
 * `CALLISTO_CONSUMER_TIMEOUT_MS`), read as configuration. Kubernetes service links (service-links.ts)
 * and other tools' variables under the prefix are ignored with a notice; a near miss of a known
 * variable is a ConfigError with a did-you-mean.
 */
import { ConfigError } from '../../core/config-error.js';
import { closestMatch } from '../../core/did-you-mean.js';
import { coerce, LEAVES, type Plain, setPath } from './config-keys.js';
import { SERVICE_LINKS_FIX, serviceLinkOf } from './service-links.js';

/** A line about the configuration that is not an error: logged by `callisto()` at its level. */
export interface ConfigNotice {
  readonly level: 'info' | 'warn';
  readonly message: string;
}

/** Variables under the CALLISTO_ prefix that are not configuration keys. */
export const CONFIG_FILE_VARIABLE = 'CALLISTO_CONFIG';
const RESERVED_VARIABLE_PREFIX = 'CALLISTO_TEST_';

export const envName = (keyPath: string[]): string =>
  `CALLISTO_${keyPath.map((key) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`;

const ENV_KEYS = new Map(LEAVES.map((keyPath) => [envName(keyPath), keyPath]));

/** The known variable an unknown `CALLISTO_*` name most likely means. */
function closestVariable(name: string): string | undefined {
  const strip = (variable: string) => variable.slice('CALLISTO_'.length);
  const wanted = strip(name);
  const byStripped = new Map([...ENV_KEYS.keys()].map((known) => [strip(known), known]));
  const close = closestMatch(wanted, byStripped.keys());
  if (close !== undefined) return byStripped.get(close);
  // A key named without its section: CALLISTO_PORT -> CALLISTO_SERVER_PORT.
  // (the least nested one when several end so: CALLISTO_PORT -> SERVER_PORT, not SERVER_HTTP_PORT)
  const sameEnding = [...byStripped.keys()].filter((known) => known.endsWith(`_${wanted}`));
  const depth = (known: string) => known.split('_').length;
  const least = Math.min(...sameEnding.map(depth));
  const nearest = sameEnding.filter((known) => depth(known) === least);
  return nearest.length === 1 ? byStripped.get(nearest[0]!) : undefined;
}

const RESERVED_PREFIX_TEXT =
  'one of the CALLISTO_* variables listed in docs/configuration.md (the prefix is reserved for them)';

/**
 * The `CALLISTO_*` variables as configuration. Kubernetes service links (service-links.ts) are ignored
 * (one info line naming them all; a warning for one that has a key's name); an unknown variable fails
 * when it is a near miss of a known one (a typo: `CALLISTO_CONSUMER_TIMEOUT`), and is otherwise ignored
 * with one warning (another tool's variable: `CALLISTO_DIR`).
 */
export function fromEnv(
  env: Readonly<Record<string, string | undefined>>,
  sources: Map<string, string>,
  notices: ConfigNotice[],
): Plain {
  const out: Plain = {};
  const links: string[] = [];
  const unknown: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined || !name.startsWith('CALLISTO_')) continue;
    if (name === CONFIG_FILE_VARIABLE || name.startsWith(RESERVED_VARIABLE_PREFIX)) continue;
    const keyPath = ENV_KEYS.get(name);
    const service = serviceLinkOf(name, raw);
    if (keyPath !== undefined && service !== undefined) {
      notices.push({
        level: 'warn',
        message: `ignored ${name}=${raw}: it is the Kubernetes service link of the Service "${service}", not a value of ${keyPath.join('.')} (which keeps its value from the other sources); ${SERVICE_LINKS_FIX}, or rename the Service`,
      });
      continue;
    }
    if (keyPath === undefined) {
      if (service !== undefined) {
        links.push(name);
        continue;
      }
      const suggestion = closestVariable(name);
      if (suggestion !== undefined && nearMiss(name, suggestion)) {
        throw ConfigError.unknownKey(name, raw, {
          source: `environment variable ${name}`,
          suggestion,
          expected: RESERVED_PREFIX_TEXT,
        });
      }
      unknown.push(suggestion === undefined ? name : `${name} (did you mean ${suggestion}?)`);
      continue;
    }
    setPath(out, keyPath, coerce(keyPath, raw));
    sources.set(keyPath.join('.'), `environment variable ${name}`);
  }
  if (links.length > 0) {
    notices.push({
      level: 'info',
      message: `ignored ${links.length} Kubernetes service-link variable${links.length === 1 ? '' : 's'} (${links.sort().join(', ')}): ${SERVICE_LINKS_FIX}`,
    });
  }
  if (unknown.length > 0) {
    notices.push({
      level: 'warn',
      message: `ignored unknown variable${unknown.length === 1 ? '' : 's'} ${unknown.sort().join(', ')}: not configuration (the CALLISTO_ prefix is reserved for the variables listed in docs/configuration.md; rename a tool's own variables)`,
    });
  }
  return out;
}

/**
 * An unknown variable that is a likely typo of `suggestion` (fails): a close spelling, or a key named
 * without its section when the name says more than one word (`CALLISTO_ADVERTISE_HOST`). A one-word name
 * that only ends like a key (`CALLISTO_DIR`, `…_SNAPSHOT_DIR`) is more likely another tool's.
 */
function nearMiss(name: string, suggestion: string): boolean {
  const strip = (variable: string) => variable.slice('CALLISTO_'.length);
  const wanted = strip(name);
  if (!strip(suggestion).endsWith(`_${wanted}`)) return true;
  return closestMatch(wanted, [strip(suggestion)]) !== undefined || wanted.includes('_');
}
