/**
 * The built-in transports, registered into `builtinExtensions` (kind `transport`) when this module is
 * imported: `tcp` and `memory`.
 */
import { builtinExtensions, type ExtensionRegistry } from '../extension/extension-registry.js';
import { createMemoryTransport } from './memory.js';
import { createTcpTransport } from './tcp.js';
import type { TransportFactory } from './transport.js';

/** Name -> factory of every built-in transport. */
export const BUILTIN_TRANSPORTS: Readonly<Record<string, TransportFactory>> = {
  tcp: createTcpTransport,
  memory: () => createMemoryTransport(),
};

/** Registers the built-in transports into `registry` (the process-wide built-ins by default). */
export function registerBuiltinTransports(registry: ExtensionRegistry = builtinExtensions): void {
  for (const [name, factory] of Object.entries(BUILTIN_TRANSPORTS))
    registry.register('transport', name, factory);
}

registerBuiltinTransports();
