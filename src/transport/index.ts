/** The built-in transports (kind `transport`, in app/builtin-extensions.ts's constant table): `tcp`, `memory` and `tls`. */
import { createMemoryTransport } from './memory.js';
import { createTcpTransport } from './tcp.js';
import { createTlsTransport } from './tls.js';
import type { TransportFactory } from './transport.js';

/** Name -> factory of every built-in transport. */
export const BUILTIN_TRANSPORTS: Readonly<Record<string, TransportFactory>> = {
  tcp: createTcpTransport,
  memory: () => createMemoryTransport(),
  // without the app's server.tls / consumer.tls it listens nowhere and refuses to connect, saying so
  tls: () => createTlsTransport(),
};
