/**
 * `CallistoModule`: Callisto in a NestJS application.
 *
 *   @Module({
 *     imports: [
 *       CallistoModule.forRoot({ application: 'users', registry: 'file://.callisto/registry' }),
 *       CallistoModule.forFeature({ services: [UsersRpc], references: [OrderServiceDef] }),
 *     ],
 *     providers: [UsersRpc, GreetingService],
 *   })
 *
 * `forRoot` (or `forRootAsync`) builds one app per Nest application, global; `forFeature` lists the
 * `@RpcService` classes to expose (Nest providers, built by Nest with their dependencies) and the
 * references to inject with `@InjectReference(definition)`.
 */
import type { DynamicModule, FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { CallistoApp, ClassOf, ReferenceOptions, ServiceDefinition } from '../index.js';
import { checkDefinition, keyOf, serviceDeclarationsOf } from '../internal.js';
import { CallistoCoreModule, type CallistoModuleOptions, createNestApp } from './core-module.js';
import { CallistoFeatureModule, type FeatureServices } from './feature-module.js';
import { nestReference } from './nest-reference.js';
import { CALLISTO_APP, CALLISTO_FEATURE, CALLISTO_OPTIONS, getReferenceToken } from './tokens.js';

export interface CallistoModuleAsyncOptions {
  /** Modules whose providers `useFactory` injects (a ConfigModule, say). */
  imports?: ModuleMetadata['imports'];
  /** What `useFactory` receives, in order. */
  inject?: FactoryProvider['inject'];
  /** The options of `callisto()`, computed (may be async). */
  // biome-ignore lint/suspicious/noExplicitAny: Nest passes whatever `inject` names
  useFactory: (...args: any[]) => CallistoModuleOptions | Promise<CallistoModuleOptions>;
}

/** A reference to inject: a definition, or a definition with `refer()` options. */
export type FeatureReference =
  | ServiceDefinition<unknown>
  | { definition: ServiceDefinition<unknown>; options?: ReferenceOptions<unknown> };

export interface CallistoFeatureOptions {
  /**
   * Classes decorated with `@RpcService(definition)` (and `@Injectable()`), provided by the app once Nest
   * has built them. Each must also be in some module's `providers`.
   */
  services?: ClassOf<object>[];
  /** References to provide, each under `getReferenceToken(definition)`, for `@InjectReference()`. */
  references?: FeatureReference[];
}

function rootModule(
  options: FactoryProvider | { provide: string; useValue: unknown },
  imports?: ModuleMetadata['imports'],
): DynamicModule {
  return {
    module: CallistoCoreModule,
    global: true,
    imports: imports ?? [],
    providers: [options, { provide: CALLISTO_APP, useFactory: createNestApp, inject: [CALLISTO_OPTIONS] }],
    exports: [CALLISTO_APP],
  };
}

// biome-ignore lint/complexity/noStaticOnlyClass: Nest's convention (`CallistoModule.forRoot()`)
export class CallistoModule {
  /** One Callisto app for the Nest application, built from `options` (see `callisto()`). */
  static forRoot(options: CallistoModuleOptions = {}): DynamicModule {
    return rootModule({ provide: CALLISTO_OPTIONS, useValue: options });
  }

  /** As forRoot, with options computed by a factory that may inject Nest providers. */
  static forRootAsync(options: CallistoModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function') {
      throw new TypeError('CallistoModule.forRootAsync() needs useFactory: (...injected) => options');
    }
    return rootModule(
      { provide: CALLISTO_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
      options.imports,
    );
  }

  /** Exposes `services` and provides `references` to the module that imports it. */
  static forFeature(options: CallistoFeatureOptions): DynamicModule {
    const services = options.services ?? [];
    const references = (options.references ?? []).map((entry) =>
      typeof entry === 'object' && entry !== null && 'definition' in entry
        ? {
            definition: checkDefinition('CallistoModule.forFeature() references', entry.definition),
            options: entry.options ?? {},
          }
        : { definition: checkDefinition('CallistoModule.forFeature() references', entry), options: {} },
    );
    for (const type of services) {
      if (typeof type !== 'function')
        throw new TypeError('CallistoModule.forFeature(): services lists classes');
      if (serviceDeclarationsOf(type).length === 0) {
        throw new TypeError(
          `CallistoModule.forFeature(): ${type.name} has no @RpcService(definition): decorate the class with the service it implements`,
        );
      }
    }
    const seen = new Set<string>();
    for (const { definition } of references) {
      if (seen.has(keyOf(definition))) {
        throw new TypeError(`CallistoModule.forFeature(): references lists ${keyOf(definition)} twice`);
      }
      seen.add(keyOf(definition));
    }
    const feature: FeatureServices = { services };
    return {
      module: CallistoFeatureModule,
      providers: [
        { provide: CALLISTO_FEATURE, useValue: feature },
        ...references.map(({ definition, options: referOptions }) => ({
          provide: getReferenceToken(definition),
          useFactory: (app: CallistoApp) => nestReference(definition, app.refer(definition, referOptions)),
          inject: [CALLISTO_APP],
        })),
      ],
      exports: references.map(({ definition }) => getReferenceToken(definition)),
    };
  }
}
