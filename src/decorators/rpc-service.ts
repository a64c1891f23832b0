/**
 * `@RpcService(definition, options)`: declares that a class implements a service. The class must
 * implement the definition's interface (sync or async methods), or the decorator does not compile, as
 * with `app.provide()`. Nothing is provided yet: `registerDecorated(app, [...])` provides the class (or an
 * instance of it) to one app. The declaration is kept per class, not in any list of classes, so no app
 * sees a class it was not given.
 *
 * It works as a standard (TC39) class decorator and as a legacy one (`experimentalDecorators`, as NestJS
 * projects compile), so a Nest provider class can carry it (see `callisto/nestjs`).
 */
import type { ProvideOptions } from '../provider/provide-options.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Implementation } from '../service/service-types.js';
import { checkDefinition, keyOf } from './check-definition.js';

// biome-ignore lint/suspicious/noExplicitAny: any constructor, whatever its parameters
export type ClassOf<I> = abstract new (...args: any[]) => I;

/** The decorator `@RpcService(definition)` returns: it accepts only classes whose instances implement `T`. */
export interface ServiceClassDecorator<T> {
  /** Standard decorators. */
  <C extends ClassOf<Implementation<T>>>(value: C, context: ClassDecoratorContext<C>): void;
  /** Legacy decorators (`experimentalDecorators`). */
  <C extends ClassOf<Implementation<T>>>(target: C): void;
}

/** One `@RpcService` on a class. */
export interface ServiceDeclaration {
  readonly definition: ServiceDefinition<unknown>;
  readonly options: ProvideOptions;
}

const declarations = new WeakMap<object, readonly ServiceDeclaration[]>();

export function RpcService<T>(
  definition: ServiceDefinition<T>,
  options: ProvideOptions = {},
): ServiceClassDecorator<T> {
  const checked = checkDefinition('@RpcService()', definition);
  return ((value: unknown, context?: { kind?: unknown }) => {
    if (typeof value !== 'function' || (context !== undefined && context.kind !== 'class')) {
      throw new TypeError(`@RpcService(${keyOf(checked)}) decorates a class`);
    }
    const existing = declarations.get(value) ?? [];
    if (existing.some((declaration) => keyOf(declaration.definition) === keyOf(checked))) {
      throw new TypeError(`${value.name || 'a class'} has @RpcService(${keyOf(checked)}) twice`);
    }
    // Decorators apply bottom-up: put this one first to keep the order they are written in.
    declarations.set(value, [{ definition: checked, options }, ...existing]);
  }) as ServiceClassDecorator<T>;
}

/**
 * The services a class declares with `@RpcService`: its own, else those of the nearest decorated class
 * it extends (a subclass still implements the interface its parent was checked against).
 */
export function serviceDeclarationsOf(type: object): readonly ServiceDeclaration[] {
  for (let current: object | null = type; current && current !== Function.prototype; ) {
    const found = declarations.get(current);
    if (found) return found;
    current = Object.getPrototypeOf(current) as object | null;
  }
  return [];
}
