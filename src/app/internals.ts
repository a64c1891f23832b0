/**
 * @internal An app's parts, for Callisto's own tests and tools (and an admin view later): not part of
 * the app's public type. Kept beside the app, not on it.
 */

import type { Consumer } from '../consumer/consumer.js';
import type { Provider } from '../provider/provider.js';
import type { RegistrySet } from '../registry/registry-set.js';

export interface AppInternals {
  readonly provider: Provider;
  readonly consumer: Consumer;
  readonly registries: RegistrySet;
}

const parts = new WeakMap<object, AppInternals>();

/** @internal Records an app's parts (the app factory does, once). */
export function keepInternals(app: object, internals: AppInternals): void {
  parts.set(app, internals);
}

/** @internal The parts of an app made by callisto(). */
export function appInternals(app: object): AppInternals {
  const found = parts.get(app);
  if (found === undefined) throw new TypeError('appInternals() needs an app made by callisto()');
  return found;
}
