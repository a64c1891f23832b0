/**
 * Resolving `RegistryOptions`: defaults, then the options passed in code, then the address's query
 * parameters (`?ttl=5000&root=/callisto&maxBackoff=5000&overridePoll=500`), which are the most specific. Validated once.
 */
import { RpcError } from '../core/rpc-error.js';
import { DEFAULT_REGISTRY_OPTIONS, type RegistryAddress, type RegistryOptions } from './registry.js';

function positiveInt(address: RegistryAddress, key: string, value: unknown, min: number): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min) {
    throw new RpcError(
      'BadRequest',
      `registry "${address.raw}": ${key} = ${JSON.stringify(value)} is not an integer >= ${min}`,
    );
  }
  return n;
}

/** Fills and validates registry options; names the key, the value and what was expected on error. */
export function resolveRegistryOptions(
  address: RegistryAddress,
  options: Partial<RegistryOptions> = {},
): RegistryOptions {
  const merged: RegistryOptions = { ...DEFAULT_REGISTRY_OPTIONS, ...stripUndefined(options) };
  const params = address.params;
  const ttl = params['ttl'] ?? params['ttlMs'];
  if (ttl !== undefined) merged.ttlMs = positiveInt(address, 'ttl', ttl, 1);
  const backoff = params['maxBackoff'] ?? params['maxBackoffMs'];
  if (backoff !== undefined) merged.maxBackoffMs = positiveInt(address, 'maxBackoff', backoff, 1);
  const poll = params['overridePoll'] ?? params['overridePollMs'];
  if (poll !== undefined) merged.overridePollMs = positiveInt(address, 'overridePoll', poll, 10);
  merged.overridePollMs = positiveInt(address, 'overridePollMs', merged.overridePollMs, 10);
  if (params['root'] !== undefined) merged.root = params['root'];
  merged.ttlMs = positiveInt(address, 'ttlMs', merged.ttlMs, 1);
  merged.maxBackoffMs = positiveInt(address, 'maxBackoffMs', merged.maxBackoffMs, 1);
  if (typeof merged.root !== 'string' || !merged.root.startsWith('/') || merged.root.length < 2) {
    throw new RpcError(
      'BadRequest',
      `registry "${address.raw}": root = ${JSON.stringify(merged.root)} is not an absolute path like /callisto`,
    );
  }
  merged.root = merged.root.replace(/\/+$/, '');
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** How long one request to a registry server may take before it counts as failed. */
export function operationTimeoutMs(options: RegistryOptions): number {
  return Math.max(1_000, Math.min(5_000, Math.floor(options.ttlMs / 2)));
}
