/**
 * The protocol a reference calls through (`refer(def, { protocol })`): `callisto`, the framed RPC
 * protocol on the provider's port (tcp or tls), is the default and, for now, the only one a reference
 * calls through. `http` (the provider's HTTP/JSON entry) is named and refused with a ConfigError until
 * the consumer has an HTTP client. A provider record may list the protocols its service is served on
 * (`protocols`); a consumer skips the records whose list does not include its protocol, and a record
 * without a list serves every protocol.
 */
import { ConfigError } from '../core/config-error.js';
import type { ProviderRecord } from '../registry/provider-record.js';

export const REFERENCE_PROTOCOLS = ['callisto', 'http'] as const;

export type ReferenceProtocol = (typeof REFERENCE_PROTOCOLS)[number];

export const DEFAULT_REFERENCE_PROTOCOL: ReferenceProtocol = 'callisto';

/** The protocol of a reference's options, checked: `callisto`, or a ConfigError naming the key. */
export function checkReferenceProtocol(label: string, value: unknown): 'callisto' {
  if (value === undefined || value === 'callisto') return 'callisto';
  if (value === 'http') {
    throw new ConfigError(`${label}.protocol`, value, "'callisto'", {
      problem:
        "calling a provider's HTTP entry from a reference is not supported yet; leave protocol out (or 'callisto'), or call the HTTP entry with any HTTP client (docs/http.md)",
    });
  }
  throw new ConfigError(
    `${label}.protocol`,
    value,
    `one of ${REFERENCE_PROTOCOLS.map((p) => `'${p}'`).join(', ')}`,
  );
}

/** Whether the provider of `record` serves `protocol` (a record that lists none serves every one). */
export function servesProtocol(record: ProviderRecord, protocol: ReferenceProtocol): boolean {
  const protocols = (record as { readonly protocols?: readonly string[] }).protocols;
  return protocols === undefined || protocols.includes(protocol);
}
