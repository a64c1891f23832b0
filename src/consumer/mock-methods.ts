/**
 * Which methods a consumer can answer from a mock (the reference's `mockImpl`, or the method's declared
 * `mock`), per service key: announced in the consumer record (`mocks`), so that an operator's
 * `mock force` on a method no consumer has a mock for is refused by the control (registry-control.ts)
 * instead of making every caller get `undefined`.
 */
import { type ServiceKey, serviceKeyString } from '../core/service-key.js';
import type { MethodDeclaration } from '../service/define-service.js';

/** Whether a reference with `mockImpl` has a mock for `method`. */
export function hasMock(
  mockImpl: object | undefined,
  method: string,
  declaration: MethodDeclaration,
): boolean {
  const fromImpl = (mockImpl as Record<string, unknown> | undefined)?.[method];
  return typeof fromImpl === 'function' || typeof declaration.mock === 'function';
}

/** Own and inherited property names of a mock implementation (a class instance's methods too). */
function propertyNames(value: object | undefined): string[] {
  const names: string[] = [];
  for (let at = value; at && at !== Object.prototype; at = Object.getPrototypeOf(at)) {
    for (const name of Object.getOwnPropertyNames(at)) if (name !== 'constructor') names.push(name);
  }
  return names;
}

export interface MockCatalog {
  /** Records the methods a new reference of `key` has a mock for. */
  add(
    key: ServiceKey,
    methods: Readonly<Record<string, MethodDeclaration>> | undefined,
    mockImpl: object | undefined,
  ): void;
  /** The methods with a mock in any reference of `key` so far, sorted. */
  of(key: ServiceKey): string[];
}

export function createMockCatalog(): MockCatalog {
  const byKey = new Map<string, Set<string>>();
  return {
    add(key, methods, mockImpl) {
      const names = new Set([...Object.keys(methods ?? {}), ...propertyNames(mockImpl)]);
      let known = byKey.get(serviceKeyString(key));
      for (const name of names) {
        if (!hasMock(mockImpl, name, methods?.[name] ?? {})) continue;
        if (known === undefined) {
          known = new Set();
          byKey.set(serviceKeyString(key), known);
        }
        known.add(name);
      }
    },
    of(key) {
      return [...(byKey.get(serviceKeyString(key)) ?? [])].sort();
    },
  };
}
