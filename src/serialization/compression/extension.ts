import type { Compressor } from './compressor.js';

declare module '../../extension/extension-registry.js' {
  interface ExtensionKinds {
    /** Compressors are registered as instances: they hold no per-app state. */
    compressor: Compressor;
  }
}
