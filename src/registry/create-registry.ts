/** Building a registry from an address string through the extension registry. */
import { builtinExtensions, type ExtensionRegistry } from '../extension/extension-registry.js';
import './builtin-registries.js';
import type { Registry, RegistryAddress, RegistryOptions } from './registry.js';
import { parseRegistryAddress } from './registry-address.js';
import { resolveRegistryOptions } from './registry-options.js';

/**
 * Parses `address` (unless already parsed), resolves the options (defaults < `options` < the address's
 * query parameters) and calls the factory registered for the address kind in `extensions`.
 */
export async function createRegistry(
  address: string | RegistryAddress,
  options: Partial<RegistryOptions> = {},
  extensions: ExtensionRegistry = builtinExtensions,
): Promise<Registry> {
  const parsed = typeof address === 'string' ? parseRegistryAddress(address) : address;
  const factory = extensions.get('registry', parsed.kind);
  return await factory(parsed, resolveRegistryOptions(parsed, options));
}
