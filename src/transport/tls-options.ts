/**
 * The TLS keys (`server.tls.*`, `consumer.tls.*`): declared here (schema, meaning, default) once;
 * provider/server-options.ts and consumer/consumer-options.ts compose them, and docs/configuration.md is
 * generated from the comments here. `resolveServerTls` / `resolveClientTls` turn them into what the
 * `tls` transport takes, reading every file once so that a missing file, a key that does not match its
 * certificate or a malformed PEM fails when the app is built, with the key and the fix.
 *
 * A key, certificate or CA value is either PEM text (it contains `-----BEGIN`) or the path of a file
 * holding it; files are watched for changes (`reloadIntervalMs`) and reloaded without dropping
 * connections.
 */
import fs from 'node:fs';
import tls from 'node:tls';
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';

const nonNegativeInt = z.number().int().nonnegative();

export const serverTlsConfigSchema = z.strictObject({
  /** The server's private key: PEM text or a file path; set it with `cert` to serve TLS only. Default ''. */
  key: z.string(),
  /** The server's certificate chain: PEM text or a file path. Default ''. */
  cert: z.string(),
  /** CA certificates that sign client certificates (mutual TLS): PEM text or a file path. Default ''. */
  ca: z.string(),
  /** Ask every client for a certificate (mutual TLS; needs `ca`). Default false. */
  requestCert: z.boolean(),
  /** With `requestCert`: refuse a client without a certificate signed by `ca` during the handshake. Default true. */
  rejectUnauthorized: z.boolean(),
  /** How often the key, cert and ca files are checked for changes, ms (a change reloads them; connections stay); 0 never. Default 2000. */
  reloadIntervalMs: nonNegativeInt,
  /** Time a connection has to finish its TLS handshake, ms, on every TLS port (RPC and HTTPS); then it is closed. Connections count against server.maxConnections and server.maxConnectionsPerAddress from the moment they arrive. Default 10000. */
  handshakeTimeoutMs: z.number().int().min(1),
});

export type ServerTlsConfig = z.infer<typeof serverTlsConfigSchema>;

export const DEFAULT_SERVER_TLS_CONFIG: ServerTlsConfig = {
  key: '',
  cert: '',
  ca: '',
  requestCert: false,
  rejectUnauthorized: true,
  reloadIntervalMs: 2_000,
  handshakeTimeoutMs: 10_000,
};

export const clientTlsConfigSchema = z.strictObject({
  /** Connect to every provider over TLS, never in plaintext (on when `ca`, `cert` or `key` is set; without `ca` the system's CAs are trusted). Default false. */
  enabled: z.boolean(),
  /** CA certificates trusted for providers' certificates: PEM text or a file path; '' trusts the system's. Default ''. */
  ca: z.string(),
  /** This consumer's certificate, for providers that ask for one (mutual TLS): PEM text or a file path. Default ''. */
  cert: z.string(),
  /** The private key of `cert`: PEM text or a file path. Default ''. */
  key: z.string(),
  /** The name checked against the provider's certificate (and sent as SNI); '' uses the provider's host. Default ''. */
  servername: z.string(),
  /** Refuse a provider whose certificate does not verify (keep true outside tests). Default true. */
  rejectUnauthorized: z.boolean(),
  /** How often the ca, cert and key files are checked for changes before a new connection, ms; 0 never. Default 2000. */
  reloadIntervalMs: nonNegativeInt,
});

export type ClientTlsConfig = z.infer<typeof clientTlsConfigSchema>;

export const DEFAULT_CLIENT_TLS_CONFIG: ClientTlsConfig = {
  enabled: false,
  ca: '',
  cert: '',
  key: '',
  servername: '',
  rejectUnauthorized: true,
  reloadIntervalMs: 2_000,
};

/** Where PEM text comes from: the text itself, or a file read (and re-read when it changes). */
export type PemSource = { readonly pem: string } | { readonly file: string };

export interface ServerTlsOptions {
  readonly key: PemSource;
  readonly cert: PemSource;
  readonly ca: PemSource | undefined;
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
  readonly reloadIntervalMs: number;
  /** Time a connection has to finish its handshake, ms (`tls.Server`'s `handshakeTimeout`). */
  readonly handshakeTimeoutMs: number;
}

export interface ClientTlsOptions {
  readonly ca: PemSource | undefined;
  readonly cert: PemSource | undefined;
  readonly key: PemSource | undefined;
  readonly servername: string | undefined;
  readonly rejectUnauthorized: boolean;
  readonly reloadIntervalMs: number;
}

/** A configured value as a PEM source; '' is none. */
export function pemSource(value: string): PemSource | undefined {
  if (value === '') return undefined;
  return value.includes('-----BEGIN') ? { pem: value } : { file: value };
}

/** The PEM text of a source (reads the file). */
export function readPem(source: PemSource): string {
  return 'pem' in source ? source.pem : fs.readFileSync(source.file, 'utf8');
}

/** A value as shown in errors: a file's path, never PEM text (a key must not reach a log). */
const shown = (source: PemSource | undefined): string | undefined =>
  source === undefined ? undefined : 'file' in source ? source.file : '(PEM text)';

function readChecked(key: string, source: PemSource, what: string): string {
  try {
    return readPem(source);
  } catch (error) {
    throw new ConfigError(key, shown(source), `${what}: PEM text or the path of a readable file`, {
      problem: (error as Error).message,
    });
  }
}

/** Builds the secure context once, so that a bad PEM or a key that does not match fails now. */
function checkContext(keyPrefix: string, options: PemContext, blame: string): void {
  try {
    tls.createSecureContext(options);
  } catch (error) {
    throw new ConfigError(
      blame,
      undefined,
      `PEM files that load together (${keyPrefix}.key must be the private key of ${keyPrefix}.cert; certificates in PEM form)`,
      { problem: (error as Error).message },
    );
  }
}

/** PEM text for a secure context (`tls.createSecureContext`). */
export interface PemContext {
  key?: string;
  cert?: string;
  ca?: string;
}

/** The secure-context options of the server's sources, read now. */
export function serverContextOptions(options: ServerTlsOptions): PemContext {
  return {
    key: readPem(options.key),
    cert: readPem(options.cert),
    ...(options.ca ? { ca: readPem(options.ca) } : {}),
  };
}

/** The secure-context options of the client's sources, read now. */
export function clientContextOptions(options: ClientTlsOptions): PemContext {
  return {
    ...(options.ca ? { ca: readPem(options.ca) } : {}),
    ...(options.cert ? { cert: readPem(options.cert) } : {}),
    ...(options.key ? { key: readPem(options.key) } : {}),
  };
}

/**
 * The server's TLS options, or undefined when `server.tls` sets no key and certificate (plaintext).
 * Throws a ConfigError for half a configuration (a key without a certificate, `requestCert` without a
 * `ca`), an unreadable file or PEM that does not load.
 */
export function resolveServerTls(config: ServerTlsConfig): ServerTlsOptions | undefined {
  const key = pemSource(config.key);
  const cert = pemSource(config.cert);
  const ca = pemSource(config.ca);
  if (key === undefined && cert === undefined) {
    if (ca !== undefined || config.requestCert) {
      throw new ConfigError(
        'server.tls.key',
        '',
        'server.tls.key and server.tls.cert set (the server needs its own certificate to serve TLS; ca and requestCert only add client certificates)',
      );
    }
    return undefined;
  }
  if (key === undefined || cert === undefined) {
    const missing = key === undefined ? 'server.tls.key' : 'server.tls.cert';
    throw new ConfigError(
      missing,
      '',
      `${missing === 'server.tls.key' ? 'the private key of server.tls.cert' : 'the certificate of server.tls.key'} (PEM text or a file path): TLS needs both`,
    );
  }
  if (config.requestCert && ca === undefined) {
    throw new ConfigError(
      'server.tls.ca',
      '',
      'the CA certificates that sign client certificates, with server.tls.requestCert: true (mutual TLS)',
    );
  }
  const options: ServerTlsOptions = {
    key,
    cert,
    ca,
    requestCert: config.requestCert,
    rejectUnauthorized: config.rejectUnauthorized,
    reloadIntervalMs: config.reloadIntervalMs,
    handshakeTimeoutMs: config.handshakeTimeoutMs,
  };
  const context = {
    key: readChecked('server.tls.key', key, 'the private key'),
    cert: readChecked('server.tls.cert', cert, 'the certificate chain'),
    ...(ca ? { ca: readChecked('server.tls.ca', ca, 'CA certificates') } : {}),
  };
  checkContext('server.tls', context, 'server.tls.cert');
  return options;
}

/** The consumer's TLS options, or undefined when `consumer.tls` is off. Throws a ConfigError as above. */
export function resolveClientTls(config: ClientTlsConfig): ClientTlsOptions | undefined {
  const ca = pemSource(config.ca);
  const cert = pemSource(config.cert);
  const key = pemSource(config.key);
  if (!config.enabled && ca === undefined && cert === undefined && key === undefined) return undefined;
  if ((cert === undefined) !== (key === undefined)) {
    const missing = key === undefined ? 'consumer.tls.key' : 'consumer.tls.cert';
    throw new ConfigError(
      missing,
      '',
      `${missing === 'consumer.tls.key' ? 'the private key of consumer.tls.cert' : 'the certificate of consumer.tls.key'} (PEM text or a file path): a client certificate needs both`,
    );
  }
  const context = {
    ...(ca ? { ca: readChecked('consumer.tls.ca', ca, 'CA certificates') } : {}),
    ...(cert ? { cert: readChecked('consumer.tls.cert', cert, 'the certificate chain') } : {}),
    ...(key ? { key: readChecked('consumer.tls.key', key, 'the private key') } : {}),
  };
  checkContext('consumer.tls', context, cert ? 'consumer.tls.cert' : 'consumer.tls.ca');
  return {
    ca,
    cert,
    key,
    servername: config.servername || undefined,
    rejectUnauthorized: config.rejectUnauthorized,
    reloadIntervalMs: config.reloadIntervalMs,
  };
}
