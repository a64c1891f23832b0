/**
 * The override record of a service: what an operator changed at run time (docs/governance.md), stored
 * once per service key beside its providers, persistent (not tied to any process's lifetime):
 *
 *   <root>/<service>:<version>/config          etcd key, ZooKeeper node, Redis string key
 *   <dir>/<root>/<service>:<version>/config.json   file registry
 *
 * The value is one JSON object, every field optional:
 *
 *   { "disabled": false,                          // the whole service: consumers route to none
 *     "disabledProviders": ["10.0.0.5:20880"],    // these providers: consumers route elsewhere
 *     "weights": { "10.0.0.6:20880": 50 },         // replaces the record's weight (0..10000)
 *     "mocks": { "getUser": "force" },            // per method: force (never call) | fail (on failure)
 *     "routes": [{ "name": "web-v2", "kind": "condition",   // routing rules (docs/routing.md),
 *                  "rule": "application = web => tag = v2" }] } // checked by routing/check-route-rules.ts
 *
 * Records are checked where they are read: a record that is not a JSON object (or is larger than
 * MAX_RECORD_BYTES) is skipped whole; a field or entry of the wrong shape is skipped alone. Each
 * problem comes back as a sentence for the reader to log once.
 */
import { checkRouteRules } from '../routing/check-route-rules.js';
import type { RouteRule } from '../routing/route-rule.js';
import { isHostName, MAX_PROVIDER_WEIGHT, MAX_RECORD_BYTES } from './record-validation.js';

/** A method's mock switch: `force` answers from the mock without calling, `fail` on a failed call. */
export type MockMode = 'force' | 'fail';

/** The operator's overrides of one service key, as stored and as consumers apply them. */
export interface ServiceOverrides {
  /** The whole service is disabled: consumers route to none of its providers. */
  disabled: boolean;
  /** Providers (`host:port`) consumers do not route new calls to. */
  disabledProviders: string[];
  /** Weights (`host:port` -> 0..10000) replacing the ones in the providers' records. */
  weights: Record<string, number>;
  /** Mock switches per method name. */
  mocks: Record<string, MockMode>;
  /** Routing rules (docs/routing.md), applied in the kinds' order; names unique. Absent: none. */
  routes?: RouteRule[];
}

/** No overrides. */
export function emptyOverrides(): ServiceOverrides {
  return { disabled: false, disabledProviders: [], weights: {}, mocks: {} };
}

/** Whether `overrides` changes nothing. */
export function isEmptyOverrides(overrides: ServiceOverrides): boolean {
  return (
    !overrides.disabled &&
    overrides.disabledProviders.length === 0 &&
    Object.keys(overrides.weights).length === 0 &&
    Object.keys(overrides.mocks).length === 0 &&
    (overrides.routes ?? []).length === 0
  );
}

/** The providers (`host:port`) an override names that are not in `registered`, sorted: left by providers that are gone. */
export function staleProviders(overrides: ServiceOverrides, registered: ReadonlySet<string>): string[] {
  const named = new Set([...overrides.disabledProviders, ...Object.keys(overrides.weights)]);
  return [...named].filter((provider) => !registered.has(provider)).sort();
}

/** `host:port` with a valid host and a port from 1 to 65535. */
export function isProviderAddress(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  const colon = text.lastIndexOf(':');
  if (colon <= 0) return false;
  const port = Number(text.slice(colon + 1));
  return isHostName(text.slice(0, colon)) && Number.isInteger(port) && port >= 1 && port <= 65535;
}

/** A method name as a service declares it: a JavaScript identifier of at most 128 characters. */
export function isMethodName(text: unknown): text is string {
  return typeof text === 'string' && text.length <= 128 && /^[A-Za-z_$][\w$]*$/.test(text);
}

/** A weight an override may set: an integer from 0 to MAX_PROVIDER_WEIGHT. */
export function isOverrideWeight(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PROVIDER_WEIGHT;
}

export interface OverrideCheck {
  /** The usable part (empty when the record was unusable as a whole). */
  readonly overrides: ServiceOverrides;
  /** What was skipped, one sentence each. */
  readonly problems: string[];
  /** The record as a whole was unusable (not JSON, not an object, too large). */
  readonly malformed: boolean;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Parses and checks a stored override record (bytes or text). */
export function parseOverrides(raw: string | Uint8Array): OverrideCheck {
  const size = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.byteLength;
  const malformed = (problem: string): OverrideCheck => ({
    overrides: emptyOverrides(),
    problems: [problem],
    malformed: true,
  });
  if (size > MAX_RECORD_BYTES) return malformed(`${size} bytes, more than ${MAX_RECORD_BYTES}`);
  const text = typeof raw === 'string' ? raw : Buffer.from(raw).toString('utf8');
  if (text.trim() === '') return { overrides: emptyOverrides(), problems: [], malformed: false };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return malformed(`not JSON (${(error as Error).message})`);
  }
  return checkOverrides(value);
}

/** Checks an override object (already parsed); see parseOverrides. */
export function checkOverrides(value: unknown): OverrideCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { overrides: emptyOverrides(), problems: ['not a JSON object'], malformed: true };
  }
  const input = value as Record<string, unknown>;
  const overrides = emptyOverrides();
  const problems: string[] = [];
  if (input['disabled'] !== undefined) {
    if (typeof input['disabled'] === 'boolean') overrides.disabled = input['disabled'];
    else problems.push(`disabled = ${describe(input['disabled'])} is not true or false`);
  }
  const providers = input['disabledProviders'];
  if (providers !== undefined) {
    if (!Array.isArray(providers)) problems.push('disabledProviders is not an array of host:port');
    else {
      for (const entry of providers.slice(0, 1_000)) {
        if (!isProviderAddress(entry))
          problems.push(`disabledProviders: ${describe(entry)} is not host:port`);
        else if (!overrides.disabledProviders.includes(entry)) overrides.disabledProviders.push(entry);
      }
    }
  }
  const weights = input['weights'];
  if (weights !== undefined) {
    if (typeof weights !== 'object' || weights === null || Array.isArray(weights)) {
      problems.push('weights is not an object of host:port -> weight');
    } else {
      for (const [address, weight] of Object.entries(weights).slice(0, 1_000)) {
        if (!isProviderAddress(address)) problems.push(`weights: ${describe(address)} is not host:port`);
        else if (!isOverrideWeight(weight)) {
          problems.push(
            `weights: ${address} = ${describe(weight)} is not an integer from 0 to ${MAX_PROVIDER_WEIGHT}`,
          );
        } else overrides.weights[address] = weight;
      }
    }
  }
  const mocks = input['mocks'];
  if (mocks !== undefined) {
    if (typeof mocks !== 'object' || mocks === null || Array.isArray(mocks)) {
      problems.push('mocks is not an object of method -> "force" | "fail"');
    } else {
      for (const [method, mode] of Object.entries(mocks).slice(0, 1_000)) {
        if (!isMethodName(method)) problems.push(`mocks: ${describe(method)} is not a method name`);
        else if (mode !== 'force' && mode !== 'fail') {
          problems.push(`mocks: ${method} = ${describe(mode)} is not "force" or "fail"`);
        } else overrides.mocks[method] = mode;
      }
    }
  }
  if (input['routes'] !== undefined) {
    const routes = checkRouteRules(input['routes']);
    if (routes.rules.length > 0) overrides.routes = routes.rules;
    problems.push(...routes.problems);
  }
  return { overrides, problems, malformed: false };
}

/** The stored form: compact JSON with the fields in a fixed order and the lists sorted. */
export function encodeOverrides(overrides: ServiceOverrides): string {
  const sortedEntries = <T>(record: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({
    disabled: overrides.disabled,
    disabledProviders: [...overrides.disabledProviders].sort(),
    weights: sortedEntries(overrides.weights),
    mocks: sortedEntries(overrides.mocks),
    // in the order written (condition and weight rules apply in list order); absent when none
    ...(overrides.routes !== undefined && overrides.routes.length > 0 ? { routes: overrides.routes } : {}),
  });
}

/**
 * The overrides of several registries as one: disabled when any says so, the union of disabled
 * providers, for weights and mocks the first registry (in configuration order) that sets one, and the
 * routing rules of the first registry that has any (a list is one operator's design: never mixed).
 */
export function mergeOverrides(all: readonly ServiceOverrides[]): ServiceOverrides {
  const merged = emptyOverrides();
  for (const overrides of all) {
    merged.disabled ||= overrides.disabled;
    for (const address of overrides.disabledProviders) {
      if (!merged.disabledProviders.includes(address)) merged.disabledProviders.push(address);
    }
    for (const [address, weight] of Object.entries(overrides.weights)) merged.weights[address] ??= weight;
    for (const [method, mode] of Object.entries(overrides.mocks)) merged.mocks[method] ??= mode;
    if (merged.routes === undefined && overrides.routes !== undefined && overrides.routes.length > 0) {
      merged.routes = overrides.routes;
    }
  }
  return merged;
}
