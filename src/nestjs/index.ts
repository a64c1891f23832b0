/**
 * `callisto/nestjs`: Callisto in a NestJS application. Needs `@nestjs/common` and `@nestjs/core` (11 or
 * 12), with `reflect-metadata` and `rxjs` as Nest itself does; nothing else in Callisto loads them.
 */
export {
  type CallistoFeatureOptions,
  CallistoModule,
  type CallistoModuleAsyncOptions,
  type FeatureReference,
} from './callisto-module.js';
export type { CallistoModuleOptions } from './core-module.js';
export { CALLISTO_APP, getReferenceToken, InjectCallistoApp, InjectReference } from './tokens.js';
