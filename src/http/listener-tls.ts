/**
 * The TLS of a listener with keys of its own (`admin.tls`, the gateway's `tls`, the dashboard's
 * `--tls-*`) as the options createHttpServer() serves (http-server-tls.ts: certificates reloaded when
 * their files change, client certificates when a CA is given, a bounded handshake, connections admitted
 * from accept). A key and a certificate chain, and optionally a CA for client certificates, each PEM
 * text or a file path (src/transport/tls-options.ts `pemSource`), key and certificate both or neither.
 * Read and checked once, when the listener is made: a missing file, half a pair or a key that does not
 * match its certificate is an error naming the key (PEM text is never shown).
 */
import tls from 'node:tls';
import { ConfigError } from '../core/config-error.js';
import {
  DEFAULT_SERVER_TLS_CONFIG,
  type PemSource,
  pemSource,
  readPem,
  type ServerTlsOptions,
} from '../transport/tls-options.js';
import type { ListenerTlsConfig } from './listener-tls-config.js';

export type { ListenerTlsConfig };

export interface ListenerTlsInput extends ListenerTlsConfig {
  /** CA certificates signing the client certificates then asked for and required; '' or none: none. */
  readonly ca?: string | undefined;
}

export interface ListenerTlsParts {
  /** What prefixes the keys in errors: `admin.tls`, `createGateway.tls`, `tls` (the dashboard). */
  readonly where: string;
  /** Makes the error about `key` (`admin.tls.cert`). Default a ConfigError. */
  readonly error?: ((key: string, value: string, expected: string, problem?: string) => Error) | undefined;
  /** How often the files are checked for a change, ms; 0 never. Default server.tls's (2000). */
  readonly reloadIntervalMs?: number | undefined;
  /** Time a connection has to finish its handshake, ms. Default server.tls's (10000). */
  readonly handshakeTimeoutMs?: number | undefined;
}

const shown = (source: PemSource): string => ('file' in source ? source.file : '(PEM text)');

const configError = (key: string, value: string, expected: string, problem?: string): Error =>
  new ConfigError(key, value, expected, problem === undefined ? {} : { problem });

/** The options to serve `config` with; undefined (plain HTTP) when it names no key and certificate. */
export function listenerTls(
  config: ListenerTlsInput | undefined,
  parts: ListenerTlsParts,
): ServerTlsOptions | undefined {
  const { where } = parts;
  const error = parts.error ?? configError;
  const key = pemSource(config?.key ?? '');
  const cert = pemSource(config?.cert ?? '');
  const ca = pemSource(config?.ca ?? '');
  if (key === undefined && cert === undefined && ca === undefined) return undefined;
  if (key === undefined || cert === undefined) {
    const missing = key === undefined ? 'key' : 'cert';
    throw error(
      `${where}.${missing}`,
      '',
      `${missing === 'key' ? `the private key of ${where}.cert` : `the certificate of ${where}.key`} (PEM text or a file path): TLS needs both`,
    );
  }
  const read = (name: string, source: PemSource): string => {
    try {
      return readPem(source);
    } catch (problem) {
      throw error(
        `${where}.${name}`,
        shown(source),
        'PEM text or the path of a readable file',
        (problem as Error).message,
      );
    }
  };
  const pems = { key: read('key', key), cert: read('cert', cert), ...(ca ? { ca: read('ca', ca) } : {}) };
  try {
    tls.createSecureContext(pems);
  } catch (problem) {
    throw error(
      `${where}.cert`,
      shown(cert),
      `a certificate whose private key is ${where}.key, both PEM that load together (${where}.key must be the private key of ${where}.cert)`,
      (problem as Error).message,
    );
  }
  return {
    key,
    cert,
    ca,
    // with a CA: only clients with a certificate it signed get past the handshake
    requestCert: ca !== undefined,
    rejectUnauthorized: true,
    reloadIntervalMs: parts.reloadIntervalMs ?? DEFAULT_SERVER_TLS_CONFIG.reloadIntervalMs,
    handshakeTimeoutMs: parts.handshakeTimeoutMs ?? DEFAULT_SERVER_TLS_CONFIG.handshakeTimeoutMs,
  };
}
