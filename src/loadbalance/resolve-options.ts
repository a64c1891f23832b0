/**
 * Validation of `LoadBalancerOptions` (the type and its defaults live in `load-balancer.ts`). Errors are
 * `ConfigError`s naming the key, the value and what was expected.
 */
import { ConfigError } from '../core/config-error.js';
import { DEFAULT_LOAD_BALANCER_OPTIONS, type LoadBalancerOptions } from './load-balancer.js';

/** Fills `options` from `DEFAULT_LOAD_BALANCER_OPTIONS` and validates every field. */
export function resolveLoadBalancerOptions(options: Partial<LoadBalancerOptions> = {}): LoadBalancerOptions {
  const resolved: LoadBalancerOptions = { ...DEFAULT_LOAD_BALANCER_OPTIONS, ...options };
  if (!(resolved.warmupMs >= 0)) invalid('warmupMs', resolved.warmupMs, 'a number >= 0');
  if (typeof resolved.effectiveWeight !== 'boolean')
    invalid('effectiveWeight', resolved.effectiveWeight, 'true or false');
  if (!Number.isInteger(resolved.virtualNodes) || resolved.virtualNodes < 1) {
    invalid('virtualNodes', resolved.virtualNodes, 'an integer >= 1');
  }
  if (
    !Array.isArray(resolved.hashArguments) ||
    resolved.hashArguments.length === 0 ||
    !resolved.hashArguments.every((p) => Number.isInteger(p) && p >= 0)
  ) {
    invalid(
      'hashArguments',
      resolved.hashArguments,
      'a non-empty array of argument positions (integers >= 0)',
    );
  }
  if (typeof resolved.random !== 'function')
    invalid('random', resolved.random, 'a function returning [0, 1)');
  if (typeof resolved.now !== 'function') invalid('now', resolved.now, 'a function returning ms');
  return resolved;
}

function invalid(key: string, value: unknown, expected: string): never {
  throw new ConfigError(`loadbalance.${key}`, value, expected);
}
