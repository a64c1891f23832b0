/**
 * The module `CallistoModule.forFeature()` returns: it provides each listed reference under its
 * definition's token (exported to the importing module), and on `onModuleInit` gives each listed
 * `@RpcService` class's Nest-made instance to the app (`provide()`), so Nest's dependency injection has
 * built it. The instances are looked up in the whole application (`moduleRef.get(type, { strict: false })`),
 * so the class stays a provider of the user's own module, with that module's dependencies.
 */
import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { type CallistoApp, type ClassOf, registerDecorated } from '../index.js';
import { CALLISTO_APP, CALLISTO_FEATURE } from './tokens.js';

/** What one forFeature() keeps for its module. */
export interface FeatureServices {
  readonly services: readonly ClassOf<object>[];
}

export class CallistoFeatureModule implements OnModuleInit {
  readonly #app: CallistoApp;
  readonly #moduleRef: ModuleRef;
  readonly #feature: FeatureServices;

  constructor(app: CallistoApp, moduleRef: ModuleRef, feature: FeatureServices) {
    this.#app = app;
    this.#moduleRef = moduleRef;
    this.#feature = feature;
  }

  onModuleInit(): void {
    for (const type of this.#feature.services) {
      let instance: object;
      try {
        instance = this.#moduleRef.get<object>(type, { strict: false });
      } catch (error) {
        throw new Error(
          `CallistoModule.forFeature(): ${type.name} is listed in services but Nest has no instance of it: add it to the providers of a module (the one that imports this forFeature())`,
          { cause: error },
        );
      }
      registerDecorated(this.#app, [instance]);
    }
  }
}
Inject(CALLISTO_APP)(CallistoFeatureModule, undefined, 0);
Inject(ModuleRef)(CallistoFeatureModule, undefined, 1);
Inject(CALLISTO_FEATURE)(CallistoFeatureModule, undefined, 2);
Module({})(CallistoFeatureModule);
