/**
 * `@RpcReference(definition, options)` on an instance field or `accessor`: the field holds a reference to
 * the service (`app.refer(definition, options)`) once the instance is given to
 * `registerDecorated(app, [...])`. The field's type must be `Remote<T>` for the definition's `T`, or the
 * decorator does not compile. Until then the field holds a stand-in whose methods throw an error saying
 * the instance is not bound to an app yet.
 *
 * Standard (TC39) decorators only: under legacy `experimentalDecorators` (NestJS), inject references
 * with `@InjectReference(definition)` from `callisto/nestjs`.
 */
import type { ReferenceOptions } from '../consumer/reference-options.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import { checkDefinition, keyOf } from './check-definition.js';

/** The decorator `@RpcReference(definition)` returns: for an instance field or accessor of type `Remote<T>`. */
export interface ReferenceDecorator<T> {
  <This>(
    value: undefined,
    context: ClassFieldDecoratorContext<This, Remote<T>> & { readonly static: false },
  ): (this: This, initial: Remote<T>) => Remote<T>;
  <This>(
    value: ClassAccessorDecoratorTarget<This, Remote<T>>,
    context: ClassAccessorDecoratorContext<This, Remote<T>> & { readonly static: false },
  ): ClassAccessorDecoratorResult<This, Remote<T>>;
}

/** One decorated field of one instance, waiting for an app. */
export interface ReferenceSlot {
  readonly field: string;
  readonly definition: ServiceDefinition<unknown>;
  readonly options: ReferenceOptions<unknown>;
  set(instance: object, value: unknown): void;
}

/** Instances whose class has `@RpcReference` fields -> their fields. Entries go with their instances. */
const slotsByInstance = new WeakMap<object, ReferenceSlot[]>();

interface MemberContext {
  kind: string;
  name: string | symbol;
  static: boolean;
  access: { set(instance: unknown, value: unknown): void };
}

export function RpcReference<T>(
  definition: ServiceDefinition<T>,
  options: NoInfer<ReferenceOptions<T>> = {},
): ReferenceDecorator<T> {
  const checked = checkDefinition('@RpcReference()', definition);
  const decorator = (_value: unknown, context?: MemberContext) => {
    if (typeof context !== 'object' || context === null) {
      throw new TypeError(
        `@RpcReference(${keyOf(checked)}) needs standard decorators; under experimentalDecorators (NestJS) use @InjectReference() from callisto/nestjs`,
      );
    }
    if ((context.kind !== 'field' && context.kind !== 'accessor') || context.static) {
      throw new TypeError(
        `@RpcReference(${keyOf(checked)}) decorates an instance field or accessor, not ${context.static ? 'a static ' : 'a '}${context.kind} (${String(context.name)})`,
      );
    }
    const field = String(context.name);
    const slot: ReferenceSlot = {
      field,
      definition: checked,
      options: options as ReferenceOptions<unknown>,
      set: (instance, value) => context.access.set(instance, value),
    };
    const initialize = function (this: object): unknown {
      const slots = slotsByInstance.get(this);
      if (slots) slots.push(slot);
      else slotsByInstance.set(this, [slot]);
      return unboundReference(`${this.constructor.name}.${field}`, checked);
    };
    return context.kind === 'field' ? initialize : { init: initialize };
  };
  return decorator as unknown as ReferenceDecorator<T>;
}

/** The `@RpcReference` fields of an instance (empty when its class has none). */
export function referenceSlotsOf(instance: object): readonly ReferenceSlot[] {
  return slotsByInstance.get(instance) ?? [];
}

/** What a decorated field holds before its instance is bound: each method throws, saying so. */
function unboundReference(label: string, definition: ServiceDefinition<unknown>): object {
  const message = `${label} is @RpcReference(${keyOf(definition)}), not bound to an app yet: give the instance (or its class) to registerDecorated(app, [...]) first`;
  return new Proxy(
    {},
    {
      get(_target, property) {
        if (typeof property === 'symbol' || property === 'then') return undefined;
        return () => {
          throw new Error(message);
        };
      },
    },
  );
}
