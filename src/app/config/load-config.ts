/**
 * Loads and validates configuration. Sources, later ones winning key by key:
 *   1. defaults (callisto-config.ts)
 *   2. a file: `callisto.config.yaml`, `.yml`, `.json` or `callisto.properties` in the working directory
 *      (or the path given as `configFile` / `CALLISTO_CONFIG`), its string values interpolated:
 *      `${VAR}`, `${VAR:-default}`, `$${` for a literal (interpolate.ts)
 *   3. environment variables `CALLISTO_<PATH>` (e.g. `CALLISTO_SERVER_PORT`, `CALLISTO_CONSUMER_TIMEOUT_MS`,
 *      `CALLISTO_REGISTRY=etcd://h:2379,zookeeper://h:2181`)
 *   4. options passed in code
 * Everything is validated once; a mistake throws a ConfigError naming the key, the value, what was
 * allowed and where the value was set (file, variable or code), with a did-you-mean for unknown keys and
 * variables. A `CALLISTO_*` variable that is no known one (besides `CALLISTO_CONFIG` and the
 * `CALLISTO_TEST_*` variables of Callisto's own test tooling) fails when it is a near miss of a known one,
 * and is otherwise ignored with a notice, as are Kubernetes service links (service-links.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { splitAddressList } from '../../core/address-list.js';
import { ConfigError } from '../../core/config-error.js';
import { parseConfig } from '../../core/describe-schema.js';
import { closestKey } from '../../core/did-you-mean.js';
import {
  type CallistoConfig,
  type CallistoConfigInput,
  callistoConfigSchema,
  DEFAULT_CONFIG,
} from './callisto-config.js';
import {
  coerce,
  coerceSubstituted,
  isPlain,
  LEAF_KEYS,
  type Plain,
  setPath,
  WHOLE_OBJECT_KEYS,
} from './config-keys.js';
import { CONFIG_FILE_VARIABLE, type ConfigNotice, envName, fromEnv } from './env-variables.js';
import { type Environment, interpolate, interpolateTree } from './interpolate.js';
import { parseProperties } from './properties.js';
import { checkSecretsSubstituted } from './secret-placeholders.js';

export type { ConfigNotice };

export const CONFIG_FILE_NAMES = [
  'callisto.config.yaml',
  'callisto.config.yml',
  'callisto.config.json',
  'callisto.properties',
] as const;

export interface LoadConfigOptions {
  /** Directory searched for a config file. Default process.cwd(). */
  cwd?: string;
  /** An explicit config file; `false` skips files. Default: CALLISTO_CONFIG, else the first of CONFIG_FILE_NAMES found. */
  configFile?: string | false;
  /**
   * Environment to read `CALLISTO_*` variables and the config file's `${VAR}` placeholders from; `false`
   * skips the `CALLISTO_*` variables (placeholders then read process.env). Default process.env.
   */
  env?: Readonly<Record<string, string | undefined>> | false;
}

/** A validated configuration and where each of its values was set. */
export interface LoadedConfig {
  readonly config: CallistoConfig;
  /**
   * Where the value of a key (`consumer.loadbalance`, `registry[1]`) was set: `file <path>`,
   * `environment variable CALLISTO_…` or `code, callisto() options`; undefined for a default.
   */
  sourceOf(key: string): string | undefined;
  /**
   * What loading ignored and the app should say once (Kubernetes service-link variables, unknown
   * `CALLISTO_*` variables that are no near miss of a known one); `callisto()` logs them.
   */
  readonly notices: readonly ConfigNotice[];
}

/** The source named for values passed to `callisto()`. */
export const CODE_SOURCE = 'code, callisto() options';

/** Options of `callisto()` that are not configuration keys (for did-you-mean only). */
const CODE_ONLY_KEYS = ['logger', 'filters', 'extend', 'load'];

type Sources = Map<string, string>;

/** Notes `source` for every key present in `value` (nested). */
function recordSources(sources: Sources, value: Plain, source: string, prefix = ''): void {
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue;
    sources.set(prefix + key, source);
    if (isPlain(child) && !WHOLE_OBJECT_KEYS.has(key))
      recordSources(sources, child, source, `${prefix}${key}.`);
  }
}

const PROPERTY_KEYS = [...LEAF_KEYS.map((key) => `callisto.${key}`), 'callisto.registry.address'];

/** `.properties` keys are `callisto.<path>`; `callisto.registry.address` is accepted for `registry`. */
function fromProperties(text: string, file: string, sources: Sources, env: Environment): Plain {
  const out: Plain = {};
  const source = `file ${file}`;
  for (const [key, raw] of parseProperties(text)) {
    const normalized = key === 'callisto.registry.address' ? 'callisto.registry' : key;
    const keyPath = normalized.startsWith('callisto.') ? normalized.slice('callisto.'.length).split('.') : [];
    if (!LEAF_KEYS.includes(keyPath.join('.'))) {
      throw ConfigError.unknownKey(key, raw, {
        source,
        suggestion: closestKey(key, PROPERTY_KEYS),
        expected: 'callisto.<key> with a key listed in docs/configuration.md',
      });
    }
    setPath(out, keyPath, coerce(keyPath, interpolate(raw, env, { key: keyPath.join('.'), source })));
    sources.set(keyPath.join('.'), source);
  }
  return out;
}

/** Top-level lists that may be written as one string (in code, YAML or JSON), as in variables. */
function normalizeLists(input: Plain): Plain {
  const out = { ...input };
  if (typeof out.registry === 'string') out.registry = splitAddressList(out.registry);
  if (typeof out.extensions === 'string') out.extensions = [out.extensions];
  return out;
}

function readConfigFile(file: string, sources: Sources, env: Environment): Plain {
  const text = fs.readFileSync(file, 'utf8');
  const source = `file ${file}`;
  if (file.endsWith('.properties')) return fromProperties(text, file, sources, env);
  let parsed: unknown;
  try {
    parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const format = file.endsWith('.json') ? 'JSON' : 'YAML';
    throw new ConfigError('configFile', file, `valid ${format} (${(error as Error).message})`, {
      source,
      cause: error,
    });
  }
  if (parsed == null) return {};
  if (!isPlain(parsed)) throw new ConfigError('configFile', parsed, 'a mapping of options', { source });
  // A file may nest everything under a top-level `callisto:` key.
  const nested = isPlain(parsed.callisto) ? parsed.callisto : parsed;
  // `${VAR}` in string values, after parsing: a variable's value is never structure
  const options = normalizeLists(interpolateTree(nested, env, source, coerceSubstituted) as Plain);
  recordSources(sources, options, source);
  return options;
}

function findConfigFile(options: LoadConfigOptions): string | undefined {
  if (options.configFile === false) return undefined;
  const cwd = options.cwd ?? process.cwd();
  const fromEnvironment =
    options.env === false ? undefined : (options.env ?? process.env)[CONFIG_FILE_VARIABLE];
  const explicit = options.configFile ?? fromEnvironment;
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    if (!fs.existsSync(file)) {
      throw new ConfigError('configFile', explicit, `an existing file (looked for ${file})`, {
        source: options.configFile
          ? 'code, callisto({ load: { configFile } })'
          : 'environment variable CALLISTO_CONFIG',
      });
    }
    return file;
  }
  for (const name of CONFIG_FILE_NAMES) {
    const file = path.join(cwd, name);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

function merge(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    out[key] =
      isPlain(value) && isPlain(out[key]) && !WHOLE_OBJECT_KEYS.has(key)
        ? merge(out[key] as Plain, value)
        : value;
  }
  return out;
}

function sourceLookup(sources: Sources): (key: string) => string | undefined {
  return (key) => {
    const parts = key.replace(/\[\d+\]/g, '').split('.');
    for (let length = parts.length; length > 0; length--) {
      const prefix = parts.slice(0, length).join('.');
      const found = sources.get(prefix);
      if (found !== undefined) return found;
      // a setting no source set is a default, even when a source set others of its section
      if (LEAF_KEYS.includes(prefix)) return undefined;
    }
    return undefined;
  };
}

/** Validates a merged object; throws a ConfigError for the first problem. */
export function validateConfig(
  candidate: unknown,
  sourceOf?: (key: string) => string | undefined,
): CallistoConfig {
  return parseConfig(callistoConfigSchema, candidate, { sourceOf, extraKeys: CODE_ONLY_KEYS });
}

/** Loads configuration from every source, validates it once, and keeps where each value came from. */
export function loadConfigWithSources(
  input: CallistoConfigInput = {},
  options: LoadConfigOptions = {},
): LoadedConfig {
  const sources: Sources = new Map();
  const notices: ConfigNotice[] = [];
  const file = findConfigFile(options);
  let merged: Plain = DEFAULT_CONFIG as unknown as Plain;
  // `${VAR}` in files reads the same environment (process.env when `env: false` skips CALLISTO_*)
  const environment = options.env === false ? process.env : (options.env ?? process.env);
  if (file) merged = merge(merged, readConfigFile(file, sources, environment));
  if (options.env !== false) merged = merge(merged, fromEnv(options.env ?? process.env, sources, notices));
  const code = normalizeLists(input as Plain);
  recordSources(sources, code, CODE_SOURCE);
  merged = merge(merged, code);
  const sourceOf = sourceLookup(sources);
  const config = validateConfig(merged, sourceOf);
  checkSecretsSubstituted(config, sourceOf);
  return { config, sourceOf, notices };
}

/** Loads configuration from every source and validates it once. */
export function loadConfig(input: CallistoConfigInput = {}, options: LoadConfigOptions = {}): CallistoConfig {
  return loadConfigWithSources(input, options).config;
}

export { envName as configEnvName };
