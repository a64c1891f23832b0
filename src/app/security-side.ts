/**
 * The security of an app, composed from its configuration (docs/security.md): the `tls` transport with
 * the app's `server.tls` and `consumer.tls` (registered in the app's extensions, unless the app brought
 * its own `tls`), the provider filters `auth`, `access` and `access-log` from `server.auth` and
 * `server.accessLog` (the consumer's `credentials` filter is in the consumer's chain table,
 * consumer/consumer-chain.ts). Every mistake is a ConfigError when the app is built.
 */

import { ConfigError } from '../core/config-error.js';
import type { NamedFilter } from '../core/filter.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { accessLogFilter } from '../filters/access-log.js';
import { accessRulesFilter } from '../filters/access-rules.js';
import { authFilter } from '../filters/auth.js';
import type { Logger } from '../observability/logger.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import { resolveServerAuth } from '../security/auth-options.js';
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
  /** `access-log`, `auth`, `access`, as configured (none when not). */
  readonly providerFilters: readonly NamedFilter[];
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

  const providerFilters: NamedFilter[] = [];
  const logged = config.server.accessLog;
  if (logged.length > 0) {
    const all = logged.includes('*');
    const names = new Set(logged);
    providerFilters.push(
      accessLogFilter({
        write: (line) => logger.info(line),
        ...(all ? {} : { services: (service: string) => names.has(service) }),
      }),
    );
  }
  const auth = resolveServerAuth(config.server.auth, serverTls?.requestCert === true, (value) =>
    readPem(pemSource(value)!),
  );
  if (auth !== undefined) {
    const refusals = createRateLimitedLog((message) => logger.warn(message));
    providerFilters.push(
      authFilter({
        authenticators: auth.authenticators,
        onRefused: (message) => refusals.warn('auth', message),
      }),
      accessRulesFilter({ rules: auth.rules, defaultAccess: auth.defaultAccess }),
    );
  }

  return {
    tls,
    serverTransport: serverTls !== undefined ? 'tls' : transportName,
    consumerExtensions,
    providerFilters,
  };
}

/** Whether the app's `tls` transport is the built-in one (an app may bring its own). */
function ownTls(extensions: ExtensionRegistry): boolean {
  return extensions.has('transport', 'tls') && extensions.get('transport', 'tls') === BUILTIN_TRANSPORTS.tls;
}
