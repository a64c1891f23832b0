/** The built-in transports (kind `transport`, in app/builtin-extensions.ts's constant table): `tcp` and `memory`. */
import { createMemoryTransport } from './memory.js';
import { createTcpTransport } from './tcp.js';
import type { TransportFactory } from './transport.js';

/** Name -> factory of every built-in transport. */
export const BUILTIN_TRANSPORTS: Readonly<Record<string, TransportFactory>> = {
  tcp: createTcpTransport,
  memory: () => createMemoryTransport(),
};
