/**
 * Checks a registry address against an app's registry kinds, when the app is built or a reference is
 * made: its kind is registered, its form parses, its parameters are valid, and the client package of a
 * built-in server-backed kind is installed. Each failure is a ConfigError that blames what is actually
 * wrong, showing the address with its credentials hidden (`redactAddress`).
 */
import { ConfigError } from '../core/config-error.js';
import { closestMatch } from '../core/did-you-mean.js';
import type { NameSite } from '../extension/extension-names.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { redactAddress } from '../security/redact.js';
import { BUILTIN_REGISTRY_FACTORIES } from './builtin-registries.js';
import { isPackageInstalled, REGISTRY_CLIENT_PACKAGES } from './load-optional.js';
import type { RegistryAddress } from './registry.js';
import { checkRegistryAddress, REGISTRY_ADDRESS_FORMAT, registryAddressKind } from './registry-address.js';
import { resolveRegistryOptions } from './registry-options.js';

const ADDRESS = `a registry address ${REGISTRY_ADDRESS_FORMAT}`;

/**
 * Checks one registry address against the app's registry kinds; returns it parsed. Throws a
 * ConfigError that blames what is actually wrong: the kind, the form of an entry, or a missing package.
 */
export function checkRegistryAddressFor(
  extensions: ExtensionRegistry,
  raw: unknown,
  site: NameSite,
): RegistryAddress {
  const options = { source: site.source };
  if (typeof raw !== 'string') throw new ConfigError(site.key, raw, ADDRESS, options);
  const shown = redactAddress(raw);
  const kind = registryAddressKind(raw);
  if (kind === undefined) {
    throw new ConfigError(site.key, shown, ADDRESS, { ...options, problem: 'no "kind://" at the start' });
  }
  if (!extensions.has('registry', kind)) {
    const kinds = extensions.names('registry');
    const closest = closestMatch(kind, kinds);
    throw new ConfigError(site.key, shown, `a registry address whose kind is one of ${kinds.join(', ')}`, {
      ...options,
      problem: `unknown registry kind "${kind}"`,
      suggestion: closest === undefined ? undefined : shown.trim().replace(/^[^:]+/, closest),
    });
  }
  const checked = checkRegistryAddress(raw);
  if (checked.problem !== undefined) {
    throw new ConfigError(site.key, shown, ADDRESS, { ...options, problem: redactAddress(checked.problem) });
  }
  try {
    resolveRegistryOptions(checked.address); // the query parameters: ?ttl=, ?root=, ?maxBackoff=
  } catch (error) {
    // the cause is not kept: its message names the address, credentials included
    const problem = redactAddress((error as Error).message.replace(/^registry "[^"]*": /, ''));
    throw new ConfigError(site.key, shown, `${ADDRESS} with valid parameters`, { ...options, problem });
  }
  const needed = REGISTRY_CLIENT_PACKAGES[kind];
  const builtin = extensions.get('registry', kind) === BUILTIN_REGISTRY_FACTORIES[kind];
  if (needed !== undefined && builtin && !isPackageInstalled(needed)) {
    throw new ConfigError(site.key, shown, `the package installed: npm install ${needed}`, {
      ...options,
      problem: `the ${kind} registry needs the package ${needed}, which is not installed`,
    });
  }
  return checked.address;
}
