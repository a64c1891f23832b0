/**
 * Runtime control through a registry (docs/governance.md), for operators' tools (the CLI, the
 * dashboard) and apps: disable or enable a service or one of its providers, change a provider's weight,
 * switch a method's mock. Each change is one `updateOverrides` of the registry: compare-and-set of the
 * service's override record, retried on conflict (override-update.ts), so that two operators changing
 * the same service at the same moment both get their change; a change that cannot be applied (the
 * record keeps changing under it, is malformed, the server does not answer) rejects, never is dropped.
 * Every consumer following the service applies it within about a second (the registry's
 * `overridePollMs`, 500 by default), and it outlives every process.
 *
 * A provider named in `disable` or `setWeight` must be registered now (a typo fails here, not silently
 * in every consumer); `enable` accepts any address, so a record naming a provider that left can be
 * cleaned up. `setMock(…, 'force')` needs a mock: it is refused, with the reason, unless a consumer of
 * the service says (in its consumer record's `mocks`) that it has a mock for the method and none says
 * it has not (forcing would make their callers fail, or before consumers refused it, get `undefined`).
 * A registry that cannot list consumers is not asked; the consumers then refuse the forced calls.
 *
 * A service no provider or consumer is registered for is refused by every change (a misspelt name
 * fails here), and so is a method its registered providers do not declare; undoing what the record
 * holds (`enable`, `setMock(…, 'off')`, `clear`) works for a service that is gone, to clean up.
 */
import type { ServiceKey } from '../core/service-key.js';
import type { RouteRule } from '../routing/route-rule.js';
import type { RouteExplanation } from '../routing/routing-stage.js';
import { createRegistry } from './create-registry.js';
import {
  emptyOverrides,
  isEmptyOverrides,
  isMethodName,
  isOverrideWeight,
  isProviderAddress,
  type MockMode,
  type ServiceOverrides,
  staleProviders,
} from './override-record.js';
import { type ConsumerRecord, type ProviderRecord, providerAddress } from './provider-record.js';
import { MAX_PROVIDER_WEIGHT } from './record-validation.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { createRouteControl, type RouteCallOptions } from './route-control.js';
import { withTimeout } from './timing.js';

/** Which service key (default version `1.0.0`, no group). */
export interface ControlKeyOptions {
  readonly version?: string;
  readonly group?: string;
}

/** Which service key, and optionally one of its providers (`host:port`). */
export interface ControlTargetOptions extends ControlKeyOptions {
  readonly provider?: string;
}

export interface RegistryControl {
  /** Disables the service (every provider), or with `provider` that provider only. */
  disable(service: string, opts?: ControlTargetOptions): Promise<void>;
  /** Undoes `disable`: the service, or with `provider` that provider. */
  enable(service: string, opts?: ControlTargetOptions): Promise<void>;
  /** Overrides a provider's weight (0..10000; 0: never picked while others are up). */
  setWeight(service: string, provider: string, weight: number, opts?: ControlKeyOptions): Promise<void>;
  /**
   * Switches a method's mock: `force` (answer from the mock, never call), `fail` (on failure), `off`.
   * `force` is refused unless the service's consumers have a mock for the method (see above).
   */
  setMock(service: string, method: string, mode: MockMode | 'off', opts?: ControlKeyOptions): Promise<void>;
  /** The current overrides of a service key. */
  overrides(service: string, opts?: ControlKeyOptions): Promise<ServiceOverrides>;
  /** Removes every override of a service key. */
  clear(service: string, opts?: ControlKeyOptions): Promise<void>;
  /**
   * Removes the overrides that name providers no longer registered (a weight or a disabled mark left by
   * a provider that is gone); returns the addresses removed.
   */
  removeStale(service: string, opts?: ControlKeyOptions): Promise<string[]>;
  /** The routing rules of a service key (docs/routing.md), in the order stored. */
  routes(service: string, opts?: ControlKeyOptions): Promise<RouteRule[]>;
  /**
   * Adds a routing rule, or replaces the one of the same name in place (compare-and-set, like every
   * change). Throws a TypeError, or a RouteSyntaxError naming the character, when the rule is invalid.
   */
  setRoute(service: string, rule: RouteRule, opts?: ControlKeyOptions): Promise<RouteRule>;
  /** Removes the routing rule `name`; false when the service had none of that name. */
  removeRoute(service: string, name: string, opts?: ControlKeyOptions): Promise<boolean>;
  /**
   * What the routing rules do with one call (`callisto route explain`): each rule in the order met,
   * and why each registered provider was kept or dropped (every provider taken as healthy).
   */
  explainRoute(service: string, call?: RouteCallOptions, opts?: ControlKeyOptions): Promise<RouteExplanation>;
  close(): Promise<void>;
}

/** What `createRegistryControl` takes besides the address. */
export interface RegistryControlOptions {
  /** Registry options (the address's query parameters win). */
  readonly registry?: Partial<RegistryOptions>;
  /** Opens the registry (default: the built-in kinds); the CLI passes its own. */
  readonly open?: (address: string | RegistryAddress) => Promise<Registry>;
  /**
   * Compare-and-set attempts of each change before it is reported as not applied (an
   * OverrideConflictError). Default OVERRIDE_UPDATE_ATTEMPTS (10).
   */
  readonly attempts?: number;
}

export const DEFAULT_CONTROL_VERSION = '1.0.0';

/** How long `disable` / `setWeight` wait for the provider list of the service they name. */
export const CONTROL_LIST_TIMEOUT_MS = 5_000;

function keyOf(service: string, opts: ControlKeyOptions = {}): ServiceKey {
  if (typeof service !== 'string' || service === '') {
    throw new TypeError(`service must be a non-empty service name, not ${JSON.stringify(service)}`);
  }
  return { name: service, version: opts.version ?? DEFAULT_CONTROL_VERSION, group: opts.group ?? '' };
}

function describeKey(key: ServiceKey): string {
  return `${key.name} (version ${key.version}${key.group ? `, group ${key.group}` : ''})`;
}

function checkProvider(provider: unknown): string {
  if (!isProviderAddress(provider)) {
    throw new TypeError(
      `provider must be host:port (as the registry lists it), not ${JSON.stringify(provider)}`,
    );
  }
  return provider;
}

export function createRegistryControl(
  address: string | RegistryAddress,
  options: RegistryControlOptions = {},
): RegistryControl {
  const open = options.open ?? ((where) => createRegistry(where, options.registry ?? {}));
  let opened: Promise<Registry> | undefined;
  let closed = false;
  const raw = typeof address === 'string' ? address : address.raw;

  const registry = async (): Promise<Registry> => {
    if (closed) throw new Error(`registry control of ${raw} is closed`);
    opened ??= open(address);
    const value = await opened;
    if (!value.readOverrides || !value.updateOverrides) {
      throw new Error(
        `registry ${raw} (${value.kind}) has no runtime control (no override record with compare-and-set)`,
      );
    }
    return value;
  };

  /** Changes the override record of `key` with compare-and-set (retried on conflict). */
  const change = async (key: ServiceKey, apply: (overrides: ServiceOverrides) => void): Promise<void> => {
    const target = await registry();
    await target.updateOverrides!(
      key,
      (overrides) => {
        apply(overrides);
        return overrides;
      },
      options.attempts === undefined ? {} : { attempts: options.attempts },
    );
  };

  /** The provider records of `key` registered now. */
  const providersOf = async (key: ServiceKey): Promise<ProviderRecord[]> => {
    const target = await registry();
    let listed: ProviderRecord[] = [];
    const subscribed = target.subscribe(key, (records) => {
      listed = records;
    });
    try {
      (await withTimeout(subscribed, CONTROL_LIST_TIMEOUT_MS, `reading the providers of ${key.name}`))();
    } catch (error) {
      subscribed.then(
        (stop) => stop(),
        () => {},
      );
      throw error;
    }
    return listed;
  };

  /** Throws unless `provider` is registered for `key` now. */
  const ensureRegistered = async (key: ServiceKey, provider: string): Promise<void> => {
    const listed = (await providersOf(key)).map(providerAddress);
    if (!listed.includes(provider)) {
      throw new Error(
        `no provider ${provider} is registered for ${describeKey(key)} in ${raw}; registered: ${
          listed.length > 0 ? listed.join(', ') : 'none'
        }`,
      );
    }
  };

  /**
   * Throws unless the registry knows `key` (a provider or a consumer registered) and, with `method`, the
   * registered providers declare it: a misspelt service or method fails here instead of writing an
   * override no consumer will ever apply.
   */
  const ensureKnown = async (key: ServiceKey, method?: string): Promise<void> => {
    const providers = await providersOf(key);
    if (providers.length === 0) {
      const target = await registry();
      const consumers = target.consumers
        ? await withTimeout(
            target.consumers(key),
            CONTROL_LIST_TIMEOUT_MS,
            `reading the consumers of ${key.name}`,
          )
        : [];
      if (consumers.length === 0) {
        throw new Error(
          `unknown service ${describeKey(key)}: no provider or consumer of it is registered in ${raw} (callisto ls lists what is)`,
        );
      }
      return; // consumers only: their methods are not listed, so any method name is taken
    }
    if (method === undefined) return;
    const declared = new Set(providers.flatMap((record) => record.methods));
    if (!declared.has(method)) {
      throw new Error(
        `${key.name} has no method ${method} (its providers in ${raw} declare ${[...declared].sort().join(', ') || 'none'})`,
      );
    }
  };

  /** Throws unless some consumer of `key` has a mock for `method` and none that tells lacks one. */
  const ensureMockable = async (key: ServiceKey, method: string): Promise<void> => {
    const target = await registry();
    if (!target.consumers) return;
    const records = await withTimeout(
      target.consumers(key),
      CONTROL_LIST_TIMEOUT_MS,
      `reading the consumers of ${key.name}`,
    );
    const telling = records.filter((record) => record.mocks !== undefined);
    const without = telling.filter((record) => !record.mocks!.includes(method));
    const named = (list: readonly ConsumerRecord[]): string =>
      list
        .slice(0, 5)
        .map((r) => `${r.host}:${r.pid}${r.application ? ` (${r.application})` : ''}`)
        .join(', ') + (list.length > 5 ? `, and ${list.length - 5} more` : '');
    const what = `cannot force the mock of ${key.name}.${method} (${describeKey(key)} in ${raw})`;
    if (without.length > 0) {
      throw new Error(
        `${what}: ${without.length} of its ${records.length} consumers have no mock for ${method}: ${named(without)}; forced, their calls would fail. Give their references a mockImpl.${method} or declare a mock for ${method}, or use fail`,
      );
    }
    if (telling.length === 0) {
      throw new Error(
        `${what}: no consumer has a mock for it (${
          records.length === 0
            ? 'no consumer is running'
            : `${records.length} consumers do not say which mocks they have: ${named(records)}`
        }); forced, its callers would get no answer from a provider nor from a mock`,
      );
    }
  };

  const routing = createRouteControl({
    readOverrides: async (key) => (await registry()).readOverrides!(key),
    change,
    ensureKnown: (key) => ensureKnown(key),
    providersOf,
  });

  return {
    routes: (service, opts = {}) => routing.routes(keyOf(service, opts)),
    setRoute: (service, rule, opts = {}) => routing.setRoute(keyOf(service, opts), rule),
    removeRoute: (service, name, opts = {}) => routing.removeRoute(keyOf(service, opts), name),
    explainRoute: (service, call = {}, opts = {}) => routing.explainRoute(keyOf(service, opts), call),
    async disable(service, opts = {}) {
      const key = keyOf(service, opts);
      if (opts.provider === undefined) {
        await ensureKnown(key);
        await change(key, (overrides) => {
          overrides.disabled = true;
        });
        return;
      }
      const provider = checkProvider(opts.provider);
      await ensureRegistered(key, provider);
      await change(key, (overrides) => {
        if (!overrides.disabledProviders.includes(provider)) overrides.disabledProviders.push(provider);
      });
    },
    async enable(service, opts = {}) {
      const key = keyOf(service, opts);
      if (opts.provider === undefined) {
        // undoing what the record holds needs no live provider (a service that is gone can be cleaned up)
        if (!(await (await registry()).readOverrides!(key)).disabled) await ensureKnown(key);
        await change(key, (overrides) => {
          overrides.disabled = false;
        });
        return;
      }
      const provider = checkProvider(opts.provider);
      await change(key, (overrides) => {
        overrides.disabledProviders = overrides.disabledProviders.filter((entry) => entry !== provider);
      });
    },
    async setWeight(service, provider, weight, opts = {}) {
      const key = keyOf(service, opts);
      checkProvider(provider);
      if (!isOverrideWeight(weight)) {
        throw new TypeError(
          `weight must be an integer from 0 to ${MAX_PROVIDER_WEIGHT}, not ${JSON.stringify(weight)}`,
        );
      }
      await ensureRegistered(key, provider);
      await change(key, (overrides) => {
        overrides.weights[provider] = weight;
      });
    },
    async setMock(service, method, mode, opts = {}) {
      const key = keyOf(service, opts);
      if (!isMethodName(method))
        throw new TypeError(`method must be a method name, not ${JSON.stringify(method)}`);
      if (mode !== 'force' && mode !== 'fail' && mode !== 'off') {
        throw new TypeError(`mock mode must be force, fail or off, not ${JSON.stringify(mode)}`);
      }
      // switching off a mock the record holds needs no live provider (cleaning up after a service)
      const recorded =
        mode === 'off' && (await (await registry()).readOverrides!(key)).mocks[method] !== undefined;
      if (!recorded) await ensureKnown(key, method);
      if (mode === 'force') await ensureMockable(key, method);
      await change(key, (overrides) => {
        if (mode === 'off') delete overrides.mocks[method];
        else overrides.mocks[method] = mode;
      });
    },
    async overrides(service, opts = {}) {
      const key = keyOf(service, opts);
      return (await registry()).readOverrides!(key);
    },
    async clear(service, opts = {}) {
      const key = keyOf(service, opts);
      // whatever the record holds, a malformed one included
      const target = await registry();
      if (isEmptyOverrides(await target.readOverrides!(key))) await ensureKnown(key);
      if (target.writeOverrides) await target.writeOverrides(key, emptyOverrides());
      else await target.updateOverrides!(key, () => emptyOverrides());
    },
    async removeStale(service, opts = {}) {
      const key = keyOf(service, opts);
      const registered = new Set((await providersOf(key)).map(providerAddress));
      let removed: string[] = [];
      await change(key, (overrides) => {
        removed = staleProviders(overrides, registered);
        overrides.disabledProviders = overrides.disabledProviders.filter((entry) => registered.has(entry));
        for (const provider of removed) delete overrides.weights[provider];
      });
      return removed;
    },
    async close() {
      if (closed) return;
      closed = true;
      const current = opened;
      opened = undefined;
      if (current)
        await current.then(
          (value) => value.close(),
          () => {},
        );
    },
  };
}
