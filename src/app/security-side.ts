/**
 * The security of an app, composed from its configuration (docs/security.md): the `tls` transport with
 * the app's `server.tls` and `consumer.tls` (registered in the app's extensions, unless the app brought
 * its own `tls`), and `server.auth` resolved (its authenticators and access rules, which the provider's
 * `auth` and `access` filters use: provider/provider-chain.ts; the consumer's `credentials` filter is in
 * the consumer's chain table, consumer/consumer-chain.ts). Every mistake is a ConfigError when the app
 * is built.
 */

import { ConfigError } from '../core/config-error.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import type { Logger } from '../observability/logger.js';
import { resolveServerAuth, type ServerAuthOptions } from '../security/auth-options.js';
import { BUILTIN_TRANSPORTS } from '../transport/index.js';
import { createTlsTransport, type TlsTransport } from '../transport/tls.js';
import { pemSource, readPem, resolveClientTls, resolveServerTls } from '../transport/tls-options.js';
import type { CallistoConfig } from './config/callisto-config.js';

export interface SecuritySide {
  /** The app's `tls` transport, when it has any TLS configuration. */
  readonly tls: TlsTransport | undefined;
  /** The transport the server listens on: `tls` with server.tls, else server.transport. */
  readonly serverTransport: string;
  /** The extensions the consumer connects with: with consumer.tls, `tcp` is TLS too (no plaintext). */
  readonly consumerExtensions: ExtensionRegistry;
  /** `server.auth` resolved (authenticators, access rules), when it authenticates anyone. */
  readonly serverAuth: ServerAuthOptions | undefined;
}

export function createSecuritySide(
  config: CallistoConfig,
  extensions: ExtensionRegistry,
  logger: Logger,
): SecuritySide {
  const serverTls = resolveServerTls(config.server.tls);
  const clientTls = resolveClientTls(config.consumer.tls);
  const transportName = config.server.transport;
  if (serverTls !== undefined && transportName !== 'tcp' && transportName !== 'tls') {
    throw new ConfigError(
      'server.transport',
      transportName,
      "'tcp' or 'tls' with server.tls set (TLS runs over TCP); remove server.tls.key/cert to serve over another transport",
    );
  }
  if (serverTls === undefined && transportName === 'tls' && ownTls(extensions)) {
    throw new ConfigError(
      'server.tls.key',
      '',
      'server.tls.key and server.tls.cert (files or PEM) to serve over server.transport: tls',
    );
  }

  let tls: TlsTransport | undefined;
  if (serverTls !== undefined || clientTls !== undefined) {
    tls = createTlsTransport({ server: serverTls, client: clientTls, logger });
    if (ownTls(extensions)) {
      const configured = tls;
      extensions.register('transport', 'tls', () => configured);
    }
  }
  let consumerExtensions = extensions;
  if (clientTls !== undefined && tls !== undefined) {
    const upgraded = tls;
    consumerExtensions = extensions.fork();
    consumerExtensions.register('transport', 'tcp', () => upgraded);
  }

  const serverAuth = resolveServerAuth(config.server.auth, serverTls?.requestCert === true, (value) =>
    readPem(pemSource(value)!),
  );

  return {
    tls,
    serverTransport: serverTls !== undefined ? 'tls' : transportName,
    consumerExtensions,
    serverAuth,
  };
}

/** Whether the app's `tls` transport is the built-in one (an app may bring its own). */
function ownTls(extensions: ExtensionRegistry): boolean {
  return extensions.has('transport', 'tls') && extensions.get('transport', 'tls') === BUILTIN_TRANSPORTS.tls;
}
