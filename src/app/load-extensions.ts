/**
 * Loads user extension modules named in configuration. Each module exports
 * `register(extensions: ExtensionRegistry)` (or a default export of that function), which may add or
 * override any kind: a user extension with a built-in's name replaces it for this app.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../core/config-error.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';

type Register = (extensions: ExtensionRegistry) => void | Promise<void>;

export async function loadExtensionModules(
  modules: readonly string[],
  extensions: ExtensionRegistry,
  source?: string,
): Promise<void> {
  for (const specifier of modules) {
    const target =
      specifier.startsWith('.') || path.isAbsolute(specifier)
        ? pathToFileURL(path.resolve(specifier)).href
        : specifier;
    let loaded: { register?: Register; default?: Register };
    try {
      loaded = await import(target);
    } catch (error) {
      throw new ConfigError('extensions', specifier, 'a module that can be imported', {
        source,
        problem: (error as Error).message,
        cause: error,
      });
    }
    const register = loaded.register ?? loaded.default;
    if (typeof register !== 'function') {
      throw new ConfigError('extensions', specifier, 'a module exporting register(extensions)', { source });
    }
    await register(extensions);
  }
}
