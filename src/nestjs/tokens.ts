/**
 * Nest injection tokens: one for the Callisto app of `CallistoModule.forRoot()`, one per service
 * definition for its reference (`@InjectReference(UserServiceDef)`).
 */
import { Inject } from '@nestjs/common';
import type { ServiceDefinition } from '../index.js';
import { checkDefinition, serviceKeyString } from '../internal.js';

/** The token of the app `CallistoModule.forRoot()` builds (a `CallistoApp`). */
export const CALLISTO_APP = 'callisto:app';
/** @internal The token of forRoot's options. */
export const CALLISTO_OPTIONS = 'callisto:options';
/** @internal The token of one forFeature()'s options, private to its module. */
export const CALLISTO_FEATURE = 'callisto:feature';

/**
 * The token under which `CallistoModule.forFeature({ references: [definition] })` provides the
 * reference: `callisto:reference:<name>:<version>` (`<group>/<name>:<version>` with a group). Nest names
 * it when the reference is injected somewhere forFeature() did not list it.
 */
export function getReferenceToken(definition: ServiceDefinition<unknown>): string {
  return `callisto:reference:${serviceKeyString(checkDefinition('getReferenceToken()', definition))}`;
}

/**
 * Injects the reference to a service into a constructor parameter or property of a Nest class:
 * `constructor(@InjectReference(UserServiceDef) private readonly users: Remote<UserService>)`. The
 * module must import `CallistoModule.forFeature({ references: [UserServiceDef] })`. Nest's legacy
 * decorators cannot see the parameter's type: write it as `Remote<T>` of the same definition.
 */
export function InjectReference<T>(definition: ServiceDefinition<T>): PropertyDecorator & ParameterDecorator {
  return Inject(getReferenceToken(definition as ServiceDefinition<unknown>));
}

/** Injects the `CallistoApp` (its `ready`, `address`, `refer()`…). */
export function InjectCallistoApp(): PropertyDecorator & ParameterDecorator {
  return Inject(CALLISTO_APP);
}
