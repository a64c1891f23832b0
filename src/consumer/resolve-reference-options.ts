/**
 * Resolves and checks the options of `refer(definition, options)` once, when the reference is made:
 * unknown keys (with a did-you-mean), values, extension names, and every entry under `methods` (which
 * must name a method of the definition). Nothing is left to fail at the first call.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import { parseConfig } from '../core/describe-schema.js';
import { closestMatch, refuseUnknownKeys } from '../core/did-you-mean.js';
import { checkExtensionName } from '../extension/extension-names.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { checkCacheable, resultCacheSchema } from '../governance/cache-options.js';
import { consumerLimitsSchema } from '../governance/limit-options.js';
import { isForbiddenMethodName, type ServiceDefinition } from '../service/define-service.js';
import { type ConsumerConfig, consumerConfigSchema } from './consumer-options.js';
import {
  APP_ONLY_CONSUMER_KEYS,
  METHOD_CONSUMER_KEYS,
  type MethodReferenceOptions,
  REFERENCE_ONLY_KEYS,
  type ReferenceOptions,
} from './reference-options.js';

/** What `refer()` works from: the reference's consumer options and each listed method's. */
export interface ResolvedReferenceOptions {
  /** The app's `consumer` config with this reference's overrides. */
  readonly reference: ConsumerConfig;
  /** The consumer config of one method: the reference's with the method's overrides. */
  configOf(method: string): ConsumerConfig;
}

const CONSUMER_KEYS = Object.keys(consumerConfigSchema.shape) as Array<keyof ConsumerConfig>;
const APP_ONLY = new Set<string>(APP_ONLY_CONSUMER_KEYS);
const REFERENCE_KEYS = [...CONSUMER_KEYS.filter((key) => !APP_ONLY.has(key)), ...REFERENCE_ONLY_KEYS];

const isFunction = z.custom((value) => typeof value === 'function').describe('a function');
/** A filter entry: a function, or a named filter from defineFilter(). */
const filterEntry = z
  .custom(
    (value) =>
      typeof value === 'function' ||
      (typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string'),
  )
  .describe('a filter: (next) => invoker, or defineFilter({ name, position, … })');

const referenceOnlySchema = z.strictObject({
  url: z.union([z.string(), z.array(z.string())]).describe('a provider address host:port, or a list of them'),
  registry: z
    .union([z.string(), z.array(z.string())])
    .describe('a registry address kind://host:port, or a list of them'),
  registerConsumer: z.boolean(),
  mock: z.union([z.boolean(), z.enum(['force', 'fail'])]).describe("true, false, 'force' or 'fail'"),
  mockImpl: z
    .custom((value) => typeof value === 'object' && value !== null)
    .describe('an object with mock methods'),
  stub: isFunction.describe('a function (remote) => methods that replace remote ones'),
  filters: z.array(filterEntry).describe('a list of filters: (next) => invoker, or defineFilter(…)'),
  attachments: z.record(z.string(), z.string()),
  tag: z.string().min(1).max(128).describe('a routing tag: 1 to 128 characters'),
  limits: consumerLimitsSchema,
  methods: z.record(z.string(), z.unknown()).describe('a mapping of method names to method options'),
  onRetriesExhausted: isFunction.describe('a function (event) => void'),
  protocol: z.string().describe("'callisto' or 'http'"),
});

const methodOptionsSchema = z.strictObject({
  ...consumerConfigSchema.pick(
    Object.fromEntries(METHOD_CONSUMER_KEYS.map((key) => [key, true])) as {
      [K in (typeof METHOD_CONSUMER_KEYS)[number]]: true;
    },
  ).shape,
  idempotent: z.boolean(),
  oneway: z.boolean(),
  hashArguments: z.array(z.number().int().nonnegative()),
  filters: z.array(filterEntry).describe('a list of filters: (next) => invoker, or defineFilter(…)'),
  limits: consumerLimitsSchema,
  cache: z.union([resultCacheSchema, z.literal(false)]).describe('{ ttlMs, max } or false'),
});

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keeps the keys of `options` in `keys` whose value is set. */
function pickSet(options: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(
    keys.filter((key) => options[key] !== undefined).map((key) => [key, options[key]]),
  );
}

function checkNames(
  extensions: ExtensionRegistry,
  overrides: Record<string, unknown>,
  prefix: string,
  source: string,
): void {
  const at = (key: string) => ({ key: prefix + key, source });
  if (overrides.serializer !== undefined)
    checkExtensionName(extensions, 'serializer', overrides.serializer, at('serializer'));
  if (overrides.compressor !== undefined)
    checkExtensionName(extensions, 'compressor', overrides.compressor, at('compressor'));
  if (overrides.loadbalance !== undefined)
    checkExtensionName(extensions, 'loadbalance', overrides.loadbalance, at('loadbalance'));
  if (overrides.cluster !== undefined)
    checkExtensionName(extensions, 'cluster', overrides.cluster, at('cluster'));
  if (overrides.retry !== undefined) checkExtensionName(extensions, 'retry', overrides.retry, at('retry'));
}

function checkKeys(
  options: Record<string, unknown>,
  known: readonly string[],
  prefix: string,
  source: string,
): void {
  refuseUnknownKeys(options, known, {
    prefix,
    source,
    explain(key) {
      if (!APP_ONLY.has(key)) return;
      throw new ConfigError(prefix + key, options[key], `consumer.${key} in the app's configuration`, {
        source,
        problem: `${key} applies to the whole app (every reference shares its connections), not to one reference`,
      });
    },
  });
}

function checkMethodName(
  definition: ServiceDefinition<unknown>,
  method: string,
  label: string,
  source: string,
): void {
  const declared = definition.methods ? Object.keys(definition.methods) : undefined;
  const known = declared ? declared.includes(method) : !isForbiddenMethodName(method);
  if (known) return;
  throw ConfigError.unknownKey(`${label}.methods.${method}`, undefined, {
    source,
    suggestion: declared ? closestMatch(method, declared) : undefined,
    expected: declared
      ? `a method declared by ${definition.name}: ${declared.join(', ')}`
      : 'the name of a method of the service',
  });
}

/** Checks and resolves the options of a reference; throws a ConfigError for the first mistake. */
export function resolveReferenceOptions<T>(
  definition: ServiceDefinition<T>,
  options: ReferenceOptions<T>,
  appConsumer: ConsumerConfig,
  extensions: ExtensionRegistry,
): ResolvedReferenceOptions {
  const label = `refer(${definition.name})`;
  const source = `code, ${label} options`;
  if (!isPlain(options)) throw new ConfigError(label, options, 'an options object', { source });
  checkKeys(options, REFERENCE_KEYS, `${label}.`, source);
  parseConfig(referenceOnlySchema.partial(), pickSet(options, REFERENCE_ONLY_KEYS), {
    keyPrefix: `${label}.`,
    sourceOf: () => source,
  });
  const overrides = pickSet(options, CONSUMER_KEYS);
  const reference = parseConfig(
    consumerConfigSchema,
    { ...appConsumer, ...overrides },
    { keyPrefix: `${label}.`, sourceOf: () => source },
  );
  checkNames(extensions, overrides, `${label}.`, source);

  const byMethod = new Map<string, ConsumerConfig>();
  const methods = (options.methods ?? {}) as Record<string, unknown>;
  for (const [method, methodOptions] of Object.entries(methods)) {
    if (methodOptions === undefined) continue;
    const prefix = `${label}.methods.${method}.`;
    checkMethodName(definition as ServiceDefinition<unknown>, method, label, source);
    if (!isPlain(methodOptions)) {
      throw new ConfigError(`${label}.methods.${method}`, methodOptions, 'an object of method options', {
        source,
      });
    }
    const methodKeys = Object.keys(methodOptionsSchema.shape);
    checkKeys(methodOptions, methodKeys, prefix, source);
    const checked = parseConfig(methodOptionsSchema.partial(), pickSet(methodOptions, methodKeys), {
      keyPrefix: prefix,
      sourceOf: () => source,
    }) as MethodReferenceOptions;
    checkNames(extensions, checked as Record<string, unknown>, prefix, source);
    const declared = definition.methods?.[method];
    if (checked.cache !== false) {
      checkCacheable(
        `${prefix}cache`,
        checked.cache ?? declared?.cache,
        {
          idempotent: checked.idempotent ?? declared?.idempotent,
          oneway: checked.oneway ?? declared?.oneway,
        },
        source,
      );
    }
    byMethod.set(method, {
      ...reference,
      ...pickSet(checked as Record<string, unknown>, METHOD_CONSUMER_KEYS),
    });
  }
  return {
    reference,
    configOf: (method) => byMethod.get(method) ?? reference,
  };
}
