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
import { splitAddressList } from './address-list.js';
import {
  type CallistoConfig,
  type CallistoConfigInput,
  callistoConfigSchema,
  DEFAULT_CONFIG,
} from './callisto-config.js';
import { ConfigError } from './config-error.js';
import { parseConfig } from './describe-schema.js';
import { closestKey, closestMatch } from './did-you-mean.js';
import { type Environment, interpolate, interpolateTree } from './interpolate.js';
import { parseProperties } from './properties.js';
import { checkSecretsSubstituted } from './secret-placeholders.js';
import { SERVICE_LINKS_FIX, serviceLinkOf } from './service-links.js';

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

/** A line about the configuration that is not an error: logged by `callisto()` at its level. */
export interface ConfigNotice {
  readonly level: 'info' | 'warn';
  readonly message: string;
}

/** The source named for values passed to `callisto()`. */
export const CODE_SOURCE = 'code, callisto() options';

/** Variables under the CALLISTO_ prefix that are not configuration keys. */
const CONFIG_FILE_VARIABLE = 'CALLISTO_CONFIG';
const RESERVED_VARIABLE_PREFIX = 'CALLISTO_TEST_';

/** Options of `callisto()` that are not configuration keys (for did-you-mean only). */
const CODE_ONLY_KEYS = ['logger', 'filters', 'extend', 'load'];

type Plain = Record<string, unknown>;

const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keys whose value is one object, set whole (never merged key by key): `tags` and `server.auth.tokens` (maps), `limits`. */
const WHOLE_OBJECT_KEYS = new Set(['tags', 'limits', 'tokens']);

/** Every settable key path, from the defaults. `tags`, `tokens` and `limits` are leaves (set whole). */
function leafPaths(value: Plain, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, child]) =>
    isPlain(child) && !WHOLE_OBJECT_KEYS.has(key) ? leafPaths(child, [...prefix, key]) : [[...prefix, key]],
  );
}

const LEAVES = leafPaths(DEFAULT_CONFIG as unknown as Plain);
const LEAF_KEYS = LEAVES.map((leaf) => leaf.join('.'));

function leafDefault(keyPath: readonly string[]): unknown {
  let value: unknown = DEFAULT_CONFIG;
  for (const key of keyPath) value = isPlain(value) ? value[key] : undefined;
  return value;
}

/** A string from a file's `${VAR}` as the number or boolean its key takes (`port: ${PORT:-20880}`). */
function coerceSubstituted(keyPath: readonly string[], text: string): unknown {
  const fallback = leafDefault(keyPath);
  return typeof fallback === 'number' || typeof fallback === 'boolean' ? coerce([...keyPath], text) : text;
}

/** Turns a string from env or .properties into the type the key expects (invalid values stay strings). */
function coerce(keyPath: string[], raw: string): unknown {
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

const envName = (keyPath: string[]): string =>
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

function setPath(target: Plain, keyPath: string[], value: unknown): void {
  let node = target;
  for (const key of keyPath.slice(0, -1)) {
    if (!isPlain(node[key])) node[key] = {};
    node = node[key] as Plain;
  }
  node[keyPath[keyPath.length - 1]!] = value;
}

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

const RESERVED_PREFIX_TEXT =
  'one of the CALLISTO_* variables listed in docs/configuration.md (the prefix is reserved for them)';

/**
 * The `CALLISTO_*` variables as configuration. Kubernetes service links (service-links.ts) are ignored
 * (one info line naming them all; a warning for one that has a key's name); an unknown variable fails
 * when it is a near miss of a known one (a typo: `CALLISTO_CONSUMER_TIMEOUT`), and is otherwise ignored
 * with one warning (another tool's variable: `CALLISTO_DIR`).
 */
function fromEnv(env: NodeJS.ProcessEnv, sources: Sources, notices: ConfigNotice[]): Plain {
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
