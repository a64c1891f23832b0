/**
 * A reference as a Nest provider value. Nest calls lifecycle hooks (`onModuleInit`, …) on every
 * provider value that has them, and a reference to a definition without declared methods answers every
 * name with a remote method: so hook names answer `undefined` there, and a definition that declares a
 * method with a hook's name is refused (Nest would call it at startup and shutdown).
 */
import type { ServiceDefinition } from '../index.js';
import { serviceKeyString } from '../internal.js';

const NEST_HOOKS: ReadonlySet<string> = new Set([
  'onModuleInit',
  'onApplicationBootstrap',
  'onModuleDestroy',
  'beforeApplicationShutdown',
  'onApplicationShutdown',
]);

export function nestReference(definition: ServiceDefinition<unknown>, reference: object): object {
  if (definition.methods) {
    const clashes = Object.keys(definition.methods).filter((method) => NEST_HOOKS.has(method));
    if (clashes.length > 0) {
      throw new TypeError(
        `${serviceKeyString(definition)} declares ${clashes.join(', ')}: Nest calls a method of that name on every provider as a lifecycle hook, so its reference cannot be injected; rename the method`,
      );
    }
    return reference;
  }
  return new Proxy(
    {},
    {
      get: (_target, property) =>
        typeof property === 'string' && NEST_HOOKS.has(property)
          ? undefined
          : Reflect.get(reference, property),
    },
  );
}
