/** Building a registry from an address string through the extension registry. */
import { createExtensionTable, type ExtensionTable } from '../extension/extension-registry.js';
import { BUILTIN_REGISTRY_FACTORIES } from './builtin-registries.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { parseRegistryAddress } from './registry-address.js';
import { resolveRegistryOptions } from './registry-options.js';

/** The built-in registry kinds alone, for a registry made outside an app. */
const BUILTIN_REGISTRIES = createExtensionTable({ registry: BUILTIN_REGISTRY_FACTORIES });

/**
 * Parses `address` (unless already parsed), resolves the options (defaults < `options` < the address's
 * query parameters) and calls the factory registered for the address kind in `extensions`.
 */
export async function createRegistry(
  address: string | RegistryAddress,
  options: Partial<RegistryOptions> = {},
  extensions: ExtensionTable = BUILTIN_REGISTRIES,
): Promise<Registry> {
  const parsed = typeof address === 'string' ? parseRegistryAddress(address) : address;
  const factory = extensions.get('registry', parsed.kind);
  return await factory(parsed, resolveRegistryOptions(parsed, options));
}
