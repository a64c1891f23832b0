/**
 * The names configuration may pick, as types and at run time.
 *
 * Types: each kind has an interface whose keys are its names (`LoadBalancerNames`), so the compiler
 * rejects `loadbalance: 'roundrobbin'`. A user extension adds its name by augmenting the interface:
 *
 *   declare module 'callisto' {
 *     interface LoadBalancerNames { zoneaware: true }
 *   }
 *
 * Run time: `checkExtensionName()` fails with a ConfigError naming the key, the value, the names
 * registered in the app and the closest one, when configuration is resolved (never at the first call).
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import { closestMatch } from '../core/did-you-mean.js';
import type { ExtensionKind, ExtensionRegistry } from './extension-registry.js';

/** The built-in names of each kind (a test checks that exactly these are registered). */
export const BUILTIN_EXTENSION_NAMES = {
  serializer: ['msgpack', 'json', 'v8', 'hessian2'],
  compressor: ['deflate', 'gzip', 'brotli'],
  loadbalance: ['random', 'roundrobin', 'consistenthash', 'leastactive', 'shortestresponse', 'p2c'],
  cluster: ['failover', 'failfast', 'failsafe', 'failback', 'forking', 'broadcast', 'hedging'],
  retry: ['none', 'fixed', 'exponential', 'adaptive'],
  registry: ['file', 'direct', 'etcd', 'zookeeper', 'zk', 'redis', 'redis-sentinel'],
  transport: ['tcp', 'memory', 'tls'],
} as const;

type Builtin<K extends keyof typeof BUILTIN_EXTENSION_NAMES> = (typeof BUILTIN_EXTENSION_NAMES)[K][number];

/** Serializer names (`consumer.serializer`, `server.serializers`); augment to add yours. */
export interface SerializerNames extends Record<Builtin<'serializer'>, true> {}
/** Compressor names (`consumer.compressor`); augment to add yours. */
export interface CompressorNames extends Record<Builtin<'compressor'>, true> {}
/** Load balancer names (`consumer.loadbalance`); augment to add yours. */
export interface LoadBalancerNames extends Record<Builtin<'loadbalance'>, true> {}
/** Fault-tolerance strategy names (`consumer.cluster`); augment to add yours. */
export interface ClusterNames extends Record<Builtin<'cluster'>, true> {}
/** Retry delay policy names (`consumer.retry`); augment to add yours. */
export interface RetryPolicyNames extends Record<Builtin<'retry'>, true> {}
/** Registry kinds, the scheme of a registry address (`etcd://…`). Addresses stay plain strings. */
export interface RegistryKindNames extends Record<Builtin<'registry'>, true> {}

/** Transport names (`server.transport`, a provider record's `transport`); augment to add yours. */
export interface TransportNames extends Record<Builtin<'transport'>, true> {}

export type SerializerName = keyof SerializerNames & string;
export type TransportName = keyof TransportNames & string;
export type CompressorName = keyof CompressorNames & string;
export type LoadBalancerName = keyof LoadBalancerNames & string;
export type ClusterName = keyof ClusterNames & string;
export type RetryPolicyName = keyof RetryPolicyNames & string;
export type RegistryKindName = keyof RegistryKindNames & string;

/**
 * The schema of a configured extension name: typed as the kind's names, checked against the app's
 * extensions when configuration is resolved (`checkExtensionName`).
 */
export const extensionNameSchema = <Name extends string>() =>
  z.string().min(1) as unknown as z.ZodType<Name, Name>;

/** Where a configured name was set, for the error. */
export interface NameSite {
  /** The configuration key, e.g. `consumer.loadbalance` or `refer(x.Y).methods.get.cluster`. */
  key: string;
  /** Where the value came from (file, variable, code). */
  source?: string | undefined;
}

/** Throws a ConfigError unless `name` is registered for `kind` in `extensions`. */
export function checkExtensionName(
  extensions: ExtensionRegistry,
  kind: ExtensionKind,
  name: unknown,
  site: NameSite,
): void {
  if (typeof name === 'string' && extensions.has(kind, name)) return;
  throw unknownExtensionName(extensions, kind, name, site);
}

/** The ConfigError for a name not registered for `kind`. */
export function unknownExtensionName(
  extensions: ExtensionRegistry,
  kind: ExtensionKind,
  name: unknown,
  site: NameSite,
): ConfigError {
  const names = extensions.names(kind);
  return new ConfigError(
    site.key,
    name,
    `one of the registered ${kind} names: ${names.join(', ') || 'none'} (or register an extension of that name)`,
    {
      source: site.source,
      suggestion: typeof name === 'string' ? closestMatch(name, names) : undefined,
    },
  );
}
