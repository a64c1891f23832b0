/**
 * Lazy loading of the optional registry clients (etcd3, ioredis, node-zookeeper-client): they are
 * imported on first use only, and a missing package gives an error saying what to install. Whether a
 * package is installed can be asked synchronously (`isPackageInstalled`), so that configuration naming
 * a registry whose client is missing fails when the app is built, not at the first registration.
 */
import { RpcError } from '../core/rpc-error.js';
import type { RegistryAddress } from './registry.js';

export type ModuleImporter = (specifier: string) => Promise<unknown>;

/** The package each built-in server-backed registry kind imports. */
export const REGISTRY_CLIENT_PACKAGES: Readonly<Record<string, string>> = {
  etcd: 'etcd3',
  zookeeper: 'node-zookeeper-client',
  zk: 'node-zookeeper-client',
  redis: 'ioredis',
  'redis-sentinel': 'ioredis',
};

/** Resolves a specifier the way `import()` from this module would; throws when it cannot. */
export type ModuleResolver = (specifier: string) => unknown;

const defaultResolver: ModuleResolver = (specifier) => import.meta.resolve(specifier);

/** Whether `specifier` can be imported from here (resolution only: nothing is loaded or run). */
export function isPackageInstalled(specifier: string, resolver: ModuleResolver = defaultResolver): boolean {
  try {
    resolver(specifier);
    return true;
  } catch (error) {
    if (isModuleNotFound(error, specifier)) return false;
    throw error;
  }
}

const defaultImporter: ModuleImporter = (specifier) => import(specifier);

function isModuleNotFound(error: unknown, specifier: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return typeof message !== 'string' || message.includes(specifier);
}

/**
 * Imports `specifier` (CommonJS packages come back as their `module.exports`). Throws
 * `registry "<address>" needs the package <specifier>: npm install <specifier>` when it is missing.
 */
export async function loadOptionalPackage<T>(
  specifier: string,
  address: RegistryAddress,
  importer: ModuleImporter = defaultImporter,
): Promise<T> {
  let loaded: unknown;
  try {
    loaded = await importer(specifier);
  } catch (error) {
    if (isModuleNotFound(error, specifier)) {
      throw new RpcError(
        'Internal',
        `registry "${address.raw}" needs the package ${specifier}: npm install ${specifier}`,
        { cause: error },
      );
    }
    throw error;
  }
  const namespace = loaded as { default?: unknown };
  return (namespace.default ?? loaded) as T;
}
