/**
 * Lazy loading of the optional registry clients (etcd3, ioredis, node-zookeeper-client): they are
 * imported on first use only, and a missing package gives an error saying what to install.
 */
import { RpcError } from '../core/rpc-error.js';
import type { RegistryAddress } from './registry.js';

export type ModuleImporter = (specifier: string) => Promise<unknown>;

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
