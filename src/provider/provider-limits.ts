/**
 * The `rate-limit`, `executes` and `leaky-rate` filters of a provided service's methods (docs/governance.md): the
 * app's limits (`server.limits`), the service's (shared by its methods) and the method's.
 */
import { parseConfig } from '../core/describe-schema.js';
import type { NamedFilter } from '../core/filter.js';
import { executesFilter } from '../filters/executes.js';
import { leakyRateFilter } from '../filters/leaky-rate.js';
import { rateLimitFilter } from '../filters/rate-limit.js';
import { type ProviderLimits, providerLimitsSchema } from '../governance/limit-options.js';
import {
  createExecutionLimit,
  createLeakyLimiters,
  createRateLimiters,
  type ExecutionLimit,
  type LeakyLimiter,
  type RateLimiter,
} from '../governance/provider-limiters.js';
import type { ProvideOptions } from './provide-options.js';

/** The app's limits, shared by every service. */
export function appLimits(limits: ProviderLimits | undefined): ScopeLimits {
  return {
    rate: createRateLimiters(limits, 'app'),
    leaky: createLeakyLimiters(limits, 'app'),
    executes: createExecutionLimit(limits, 'app'),
  };
}

/** A scope's rate limiters and execution limit. */
export interface ScopeLimits {
  readonly rate: RateLimiter[];
  /** The leaky-bucket rates (`kind: 'leaky'`). */
  readonly leaky: LeakyLimiter[];
  readonly executes: ExecutionLimit | undefined;
}

/**
 * The `rate-limit` and `executes` filters of each method of a service: the app's limits, the service's
 * (shared by its methods) and the method's, checked here (a ConfigError names the key). A method with
 * none gets no filter.
 */
export function createLimitFilters(
  service: string,
  provideOptions: ProvideOptions,
  where: string,
  app: ScopeLimits,
): (method: string) => NamedFilter[] {
  const source = `code, ${where} options`;
  const check = (value: unknown, key: string): ProviderLimits | undefined =>
    value === undefined
      ? undefined
      : parseConfig(providerLimitsSchema, value, { keyPrefix: `${key}.`, sourceOf: () => source });
  const serviceLimits = check(provideOptions.limits, `${where}.limits`);
  const forService: ScopeLimits = {
    rate: createRateLimiters(serviceLimits, `service ${service}`),
    leaky: createLeakyLimiters(serviceLimits, `service ${service}`),
    executes: createExecutionLimit(serviceLimits, `service ${service}`),
  };
  const byMethod = new Map<string, NamedFilter[]>();
  for (const [method, methodOptions] of Object.entries(provideOptions.methods ?? {})) {
    const limits = check(
      (methodOptions as { limits?: unknown } | undefined)?.limits,
      `${where}.methods.${method}.limits`,
    );
    byMethod.set(
      method,
      limitFilters(app, forService, {
        rate: createRateLimiters(limits, `method ${service}.${method}`),
        leaky: createLeakyLimiters(limits, `method ${service}.${method}`),
        executes: createExecutionLimit(limits, `method ${service}.${method}`),
      }),
    );
  }
  const shared = limitFilters(app, forService, { rate: [], leaky: [], executes: undefined });
  return (method) => byMethod.get(method) ?? shared;
}

function limitFilters(...scopes: ScopeLimits[]): NamedFilter[] {
  const rate = scopes.flatMap((scope) => scope.rate);
  const leaky = scopes.flatMap((scope) => scope.leaky);
  const executes = scopes.flatMap((scope) => (scope.executes === undefined ? [] : [scope.executes]));
  return [
    ...(rate.length > 0 ? [rateLimitFilter(rate)] : []),
    ...(executes.length > 0 ? [executesFilter(executes)] : []),
    ...(leaky.length > 0 ? [leakyRateFilter(leaky)] : []),
  ];
}
