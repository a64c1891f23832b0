/**
 * `registerDecorated(app, [classes or instances])`: the one step that connects decorated classes to an
 * app. For each target (a class is constructed with no arguments; an instance is taken as it is): every
 * `@RpcReference` field gets `app.refer(definition, options)`, then every `@RpcService` of its class is
 * provided with `app.provide(definition, instance, options)`. Returns the instances, in order.
 */
import type { CallistoApp } from '../app/callisto-app.js';
import { keyOf } from './check-definition.js';
import { referenceSlotsOf } from './rpc-reference.js';
import { serviceDeclarationsOf } from './rpc-service.js';

/** What `registerDecorated` needs of an app. */
export type DecoratedApp = Pick<CallistoApp, 'provide' | 'refer'>;

/**
 * A decorated class constructed with no arguments, or an instance (for classes that take arguments: a
 * class whose constructor needs arguments is not accepted as a class).
 */
export type DecoratedTarget = (new () => object) | (object & { readonly prototype?: never });

/** The instance each target stands for. */
export type DecoratedInstances<Targets extends readonly DecoratedTarget[]> = {
  -readonly [K in keyof Targets]: Targets[K] extends new () => infer I ? I : Targets[K];
};

/** Instances already given to an app: a second binding would quietly replace the first app's references. */
const bound = new WeakSet<object>();

export function registerDecorated<const Targets extends readonly DecoratedTarget[]>(
  app: DecoratedApp,
  targets: Targets,
): DecoratedInstances<Targets> {
  if (!Array.isArray(targets)) {
    throw new TypeError('registerDecorated(app, targets) takes an array of classes or instances');
  }
  return targets.map((target: DecoratedTarget) => {
    const instance = typeof target === 'function' ? construct(target as new () => object) : target;
    if (typeof instance !== 'object' || instance === null) {
      throw new TypeError(`registerDecorated(): ${String(instance)} is neither a class nor an instance`);
    }
    const name = instance.constructor?.name || 'object';
    const slots = referenceSlotsOf(instance);
    const services = serviceDeclarationsOf(instance.constructor);
    if (slots.length === 0 && services.length === 0) {
      throw new TypeError(
        `registerDecorated(): ${name} has neither @RpcService nor @RpcReference fields: nothing to register`,
      );
    }
    if (bound.has(instance))
      throw new Error(`registerDecorated(): this ${name} is already registered with an app`);
    // Every reference first: a mistake in one's options (a ConfigError) leaves the instance as it was.
    const references = slots.map((slot) => app.refer(slot.definition, slot.options));
    bound.add(instance);
    for (const [index, slot] of slots.entries()) slot.set(instance, references[index]);
    for (const { definition, options } of services) {
      try {
        app.provide(definition, instance as never, options);
      } catch (error) {
        throw new Error(
          `registerDecorated(): cannot provide ${keyOf(definition)} with ${name}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    }
    return instance;
  }) as DecoratedInstances<Targets>;
}

function construct(type: new () => object): object {
  try {
    return new type();
  } catch (error) {
    throw new Error(
      `registerDecorated(): new ${type.name || 'class'}() failed (${(error as Error).message}); a class whose constructor takes arguments is given as an instance`,
      { cause: error },
    );
  }
}
