import type { Serializer } from './serializer.js';

declare module '../extension/extension-registry.js' {
  interface ExtensionKinds {
    /** Serializers are registered as instances: they hold no per-app state. */
    serializer: Serializer;
  }
}
