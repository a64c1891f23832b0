/**
 * How the CLI reaches a provider to probe it (`callisto doctor`, `callisto ls --load`): over TLS, with the
 * consumer's TLS options, when its record says it serves TLS only; plaintext otherwise.
 */
import tls from 'node:tls';
import { type ClientTlsConfig, clientContextOptions, resolveClientTls } from '../internal.js';
import type { ProviderRecord } from '../registry/index.js';
import type { ProbeTls } from './heartbeat-probe.js';

/** What a TLS probe speaks with: the consumer's TLS options, or undefined when it has none. */
export function probeTlsOf(config: ClientTlsConfig): ProbeTls | undefined {
  const options = resolveClientTls(config);
  if (options === undefined) return undefined;
  return {
    secureContext: tls.createSecureContext(clientContextOptions(options)),
    servername: options.servername,
    rejectUnauthorized: options.rejectUnauthorized,
  };
}

/** A record's provider serves TLS only (transport `tls`, or `tls: true` over tcp). */
export const servesTls = (record: ProviderRecord): boolean =>
  record.transport === 'tls' || (record.tls === true && (record.transport ?? 'tcp') === 'tcp');
