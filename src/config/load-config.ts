/**
 * Loads and validates configuration. Sources, later ones winning key by key:
 *   1. defaults (callisto-config.ts)
 *   2. a file: `callisto.config.yaml`, `.yml`, `.json` or `callisto.properties` in the working directory
 *      (or the path given as `configFile` / `CALLISTO_CONFIG`)
 *   3. environment variables `CALLISTO_<PATH>` (e.g. `CALLISTO_SERVER_PORT`, `CALLISTO_CONSUMER_TIMEOUT_MS`,
 *      `CALLISTO_REGISTRY=etcd://h:2379,zookeeper://h:2181`)
 *   4. options passed in code
 * Everything is validated once; an invalid value throws a ConfigError naming the key, the value and
 * what was allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import {
  type CallistoConfig,
  type CallistoConfigInput,
  callistoConfigSchema,
  DEFAULT_CONFIG,
} from './callisto-config.js';
import { ConfigError } from './config-error.js';
import { parseProperties } from './properties.js';

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
  /** Environment to read `CALLISTO_*` from; `false` skips it. Default process.env. */
  env?: Readonly<Record<string, string | undefined>> | false;
}

type Plain = Record<string, unknown>;

const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every settable key path, from the defaults. `tags` is a leaf (a map). */
function leafPaths(value: Plain, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([key, child]) =>
    isPlain(child) && key !== 'tags' ? leafPaths(child, [...prefix, key]) : [[...prefix, key]],
  );
}

const LEAVES = leafPaths(DEFAULT_CONFIG as unknown as Plain);

function leafDefault(keyPath: string[]): unknown {
  let value: unknown = DEFAULT_CONFIG;
  for (const key of keyPath) value = (value as Plain)[key];
  return value;
}

/** Turns a string from env or .properties into the type the key expects (invalid values stay strings). */
function coerce(keyPath: string[], raw: string): unknown {
  const fallback = leafDefault(keyPath);
  const text = raw.trim();
  if (typeof fallback === 'number') return text !== '' && Number.isFinite(Number(text)) ? Number(text) : raw;
  if (typeof fallback === 'boolean') return text === 'true' ? true : text === 'false' ? false : raw;
  if (Array.isArray(fallback)) return text === '' ? [] : text.split(',').map((part) => part.trim());
  if (isPlain(fallback)) {
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

function setPath(target: Plain, keyPath: string[], value: unknown): void {
  let node = target;
  for (const key of keyPath.slice(0, -1)) {
    if (!isPlain(node[key])) node[key] = {};
    node = node[key] as Plain;
  }
  node[keyPath[keyPath.length - 1]!] = value;
}

function fromEnv(env: NodeJS.ProcessEnv): Plain {
  const out: Plain = {};
  for (const keyPath of LEAVES) {
    const raw = env[envName(keyPath)];
    if (raw !== undefined) setPath(out, keyPath, coerce(keyPath, raw));
  }
  return out;
}

/** `.properties` keys are `callisto.<path>`; `callisto.registry.address` is accepted for `registry`. */
function fromProperties(text: string, file: string): Plain {
  const out: Plain = {};
  for (const [key, raw] of parseProperties(text)) {
    const normalized = key === 'callisto.registry.address' ? 'callisto.registry' : key;
    if (!normalized.startsWith('callisto.')) {
      throw new ConfigError(key, raw, `a key starting with "callisto." (in ${file})`);
    }
    const keyPath = normalized.slice('callisto.'.length).split('.');
    const known = LEAVES.some((leaf) => leaf.join('.') === keyPath.join('.'));
    if (!known)
      throw new ConfigError(key, raw, `one of the known keys (in ${file}), see docs/configuration.md`);
    setPath(out, keyPath, coerce(keyPath, raw));
  }
  return out;
}

function readConfigFile(file: string): Plain {
  const text = fs.readFileSync(file, 'utf8');
  if (file.endsWith('.properties')) return fromProperties(text, file);
  const parsed = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  if (parsed == null) return {};
  if (!isPlain(parsed)) throw new ConfigError('(file)', parsed, `a mapping of options in ${file}`);
  // A file may nest everything under a top-level `callisto:` key.
  return isPlain(parsed.callisto) ? parsed.callisto : parsed;
}

function findConfigFile(options: LoadConfigOptions): string | undefined {
  if (options.configFile === false) return undefined;
  const cwd = options.cwd ?? process.cwd();
  const explicit =
    options.configFile ?? (options.env === false ? undefined : (options.env ?? process.env).CALLISTO_CONFIG);
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    if (!fs.existsSync(file)) throw new ConfigError('configFile', explicit, 'an existing file');
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
      isPlain(value) && isPlain(out[key]) && key !== 'tags' ? merge(out[key] as Plain, value) : value;
  }
  return out;
}

/** Normalizes what code may pass loosely (a single registry string). */
function normalizeCodeInput(input: CallistoConfigInput): Plain {
  const out = { ...input } as Plain;
  if (typeof out.registry === 'string') out.registry = out.registry.split(',').filter(Boolean);
  if (typeof out.extensions === 'string') out.extensions = [out.extensions];
  return out;
}

/** Validates a merged object; throws a ConfigError for the first problem. */
export function validateConfig(candidate: unknown): CallistoConfig {
  const result = callistoConfigSchema.safeParse(candidate);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const keyPath = issue.path.map(String);
  let value: unknown = candidate;
  for (const key of keyPath) {
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  }
  if (issue.code === 'unrecognized_keys') {
    const prefix = keyPath.length ? `${keyPath.join('.')}.` : '';
    const unknown = (issue as { keys: string[] }).keys.map((key) => prefix + key);
    throw new ConfigError(
      unknown.join(', '),
      '(unknown key)',
      'only the keys listed in docs/configuration.md',
    );
  }
  throw new ConfigError(keyPath.join('.') || '(root)', value, issue.message);
}

/** Loads configuration from every source and validates it once. */
export function loadConfig(input: CallistoConfigInput = {}, options: LoadConfigOptions = {}): CallistoConfig {
  const file = findConfigFile(options);
  let merged: Plain = DEFAULT_CONFIG as unknown as Plain;
  if (file) merged = merge(merged, readConfigFile(file));
  if (options.env !== false) merged = merge(merged, fromEnv(options.env ?? process.env));
  merged = merge(merged, normalizeCodeInput(input));
  return validateConfig(merged);
}

export { envName as configEnvName };
