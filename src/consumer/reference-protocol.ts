/**
 * The protocol a reference calls through (`refer(def, { protocol })`): `callisto`, the framed RPC
 * protocol on the provider's port (tcp or tls), is the default; `http` calls the provider's HTTP/JSON
 * entry (docs/http.md) through an HTTP connection (http-connection.ts) behind the same endpoint, at the
 * record's `http` port (HTTPS when the provider serves TLS). A provider record may list the protocols
 * its service is served on (`protocols`); a consumer skips the records whose list does not include its
 * protocol, and a record without a list serves every protocol (`http` only when it has an `http` port).
 *
 * `grpc` calls gRPC servers (docs/grpc-consumer.md) through a gRPC connection (grpc-connection.ts):
 * direct addresses `grpc://host:port` (h2c) and `grpcs://host:port` (TLS), and registry records whose
 * `transport` is `grpc` or `grpcs` (a gRPC server at the record's host and port, Callisto or not); such
 * records are gRPC only: the other protocols skip them.
 */
import { ConfigError } from '../core/config-error.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import { isGrpcTransport } from './grpc-connection.js';
import { isHttpTransport } from './http-connection.js';

export const REFERENCE_PROTOCOLS = ['callisto', 'http', 'grpc'] as const;

export type ReferenceProtocol = (typeof REFERENCE_PROTOCOLS)[number];

export const DEFAULT_REFERENCE_PROTOCOL: ReferenceProtocol = 'callisto';

/** The protocol of a reference's options, checked: `callisto`, `http` or `grpc`, or a ConfigError naming the key. */
export function checkReferenceProtocol(label: string, value: unknown): ReferenceProtocol {
  if (value === undefined || value === 'callisto') return 'callisto';
  if (value === 'http' || value === 'grpc') return value;
  throw new ConfigError(
    `${label}.protocol`,
    value,
    `one of ${REFERENCE_PROTOCOLS.map((p) => `'${p}'`).join(', ')}`,
    {
      problem:
        "'callisto' calls the provider's RPC port (tcp or tls), 'http' its HTTP/JSON entry (server.http, docs/http.md), 'grpc' gRPC servers (grpc:// or grpcs://, docs/grpc-consumer.md)",
    },
  );
}

/** Whether the provider of `record` serves `protocol` (a record that lists none serves every one). */
export function servesProtocol(record: ProviderRecord, protocol: ReferenceProtocol): boolean {
  const protocols = (record as { readonly protocols?: readonly string[] }).protocols;
  return protocols === undefined || protocols.includes(protocol);
}

/** Whether `record` is reached through a pseudo-transport of the HTTP or gRPC connections, not a Transport. */
function isPseudoTransport(record: ProviderRecord): boolean {
  const transport = record.transport ?? '';
  return isHttpTransport(transport) || isGrpcTransport(transport);
}

/**
 * The record as a reference of `protocol` reaches it, or undefined when it cannot: for `callisto` the
 * record itself when it serves the protocol; for `http` the record at its HTTP entry (`http` port, on
 * the record's host; `https` when the provider serves TLS), or as it is for a direct `http://` address;
 * for `grpc` the record as it is when its transport is `grpc` or `grpcs`.
 */
export function recordThrough(
  record: ProviderRecord,
  protocol: ReferenceProtocol,
): ProviderRecord | undefined {
  if (protocol === 'callisto') {
    return servesProtocol(record, protocol) && !isPseudoTransport(record) ? record : undefined;
  }
  if (protocol === 'grpc') return isGrpcTransport(record.transport ?? '') ? record : undefined;
  if (isHttpTransport(record.transport ?? '')) return record;
  if (isGrpcTransport(record.transport ?? '')) return undefined;
  const httpPort = record.http?.port;
  if (httpPort === undefined || !servesProtocol(record, protocol)) return undefined;
  return {
    ...record,
    port: httpPort,
    transport: record.transport === 'tls' || record.tls === true ? 'https' : 'http',
  };
}
