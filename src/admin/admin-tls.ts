/**
 * The HTTP or HTTPS server of a listener with TLS options of its own (`admin.tls`, the gateway's
 * `tls`): a key and a certificate chain, each PEM text or a file path (src/transport/tls-options.ts
 * `pemSource`), both or neither. Read and checked once, when the server is made: a missing file, half
 * a pair or a key that does not match its certificate is a ConfigError naming the key (PEM text is
 * never shown). One small function, so that a shared HTTP toolkit can take its place.
 */
import http from 'node:http';
import https from 'node:https';
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

const shown = (source: PemSource): string => ('file' in source ? source.file : '(PEM text)');

/**
 * `http.createServer(options, handler)`, or `https.createServer` with the key and certificate of `tls`
 * when it sets them. `where` prefixes the keys in errors (`admin.tls`, `createGateway.tls`).
 */
export function createListenerServer(
  config: ListenerTlsConfig | undefined,
  where: string,
  options: http.ServerOptions,
  handler?: http.RequestListener,
): http.Server {
  const key = pemSource(config?.key ?? '');
  const cert = pemSource(config?.cert ?? '');
  if (key === undefined && cert === undefined) return http.createServer(options, handler);
  if (key === undefined || cert === undefined) {
    const missing = key === undefined ? 'key' : 'cert';
    throw new ConfigError(
      `${where}.${missing}`,
      '',
      `${missing === 'key' ? `the private key of ${where}.cert` : `the certificate of ${where}.key`} (PEM text or a file path): TLS needs both`,
    );
  }
  const read = (name: string, source: PemSource): string => {
    try {
      return readPem(source);
    } catch (error) {
      throw new ConfigError(`${where}.${name}`, shown(source), 'PEM text or the path of a readable file', {
        problem: (error as Error).message,
      });
    }
  };
  const pair = { key: read('key', key), cert: read('cert', cert) };
  try {
    tls.createSecureContext(pair);
  } catch (error) {
    throw new ConfigError(
      `${where}.cert`,
      shown(cert),
      `PEM that loads together (${where}.key must be the private key of ${where}.cert)`,
      { problem: (error as Error).message },
    );
  }
  // an https.Server is an http.Server with TLS underneath: the same events and limits; the handshake
  // is bounded by the headers' timeout
  const handshakeTimeout = options.headersTimeout ?? 10_000;
  return https.createServer({ handshakeTimeout, ...options, ...pair }, handler) as unknown as http.Server;
}

/**
 * The same keys as the shared HTTP toolkit's TLS options (src/http/http-server-tls.ts: certificates
 * reloaded when their files change, handshake timeout, connection caps from accept), after the checks
 * of `createListenerServer`; undefined for plain HTTP.
 */
export function listenerServerTls(
  config: ListenerTlsConfig | undefined,
  where: string,
): ServerTlsOptions | undefined {
  createListenerServer(config, where, {}).close(); // a missing file, half a pair, a mismatch: ConfigError
  const key = pemSource(config?.key ?? '');
  const cert = pemSource(config?.cert ?? '');
  if (key === undefined || cert === undefined) return undefined;
  return {
    key,
    cert,
    ca: undefined,
    requestCert: false,
    rejectUnauthorized: false,
    reloadIntervalMs: DEFAULT_SERVER_TLS_CONFIG.reloadIntervalMs,
    handshakeTimeoutMs: DEFAULT_SERVER_TLS_CONFIG.handshakeTimeoutMs,
  };
}
