/**
 * The module `CallistoModule.forRoot()` returns (global): it holds the Callisto app and ties its
 * lifetime to Nest's. The app starts (listens, registers) on `onApplicationBootstrap`, after every
 * module's `onModuleInit` (where forFeature() provides its services); it closes gracefully (unregister,
 * go-away, drain, close) on `beforeApplicationShutdown`, the step where Nest closes its own servers:
 * after `onModuleDestroy`, before `onApplicationShutdown` (where database modules close their pools), so
 * calls in progress finish with their dependencies still there. With `app.enableShutdownHooks()` the
 * same happens on SIGTERM/SIGINT.
 *
 * Written without decorator syntax (Nest's decorators are called as functions) so that it compiles
 * under this package's standard-decorator build.
 */
import { type BeforeApplicationShutdown, Inject, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { type AppOptions, type CallistoApp, ConfigError, callisto } from '../index.js';
import { CALLISTO_APP } from './tokens.js';

/** `CallistoModule.forRoot()` options: those of `callisto()`. */
export type CallistoModuleOptions = AppOptions;

export class CallistoCoreModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #app: CallistoApp;

  constructor(app: CallistoApp) {
    this.#app = app;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.#app.state === 'created') await this.#app.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.#app.close();
  }
}
Inject(CALLISTO_APP)(CallistoCoreModule, undefined, 0);
Module({})(CallistoCoreModule);

/**
 * Builds the app for Nest. Callisto's own signal handling would exit the process in the middle of
 * Nest's shutdown, so `handleSignals` must stay off (Nest's `enableShutdownHooks()` does that job).
 */
export async function createNestApp(options: CallistoModuleOptions): Promise<CallistoApp> {
  const app = await callisto(options);
  if (app.config.handleSignals) {
    await app.close();
    throw new ConfigError('handleSignals', true, 'false under NestJS', {
      problem:
        'Nest closes the Callisto app on app.close(); for SIGTERM/SIGINT call app.enableShutdownHooks() instead',
    });
  }
  return app;
}
