/**
 * The HTTP/JSON entry's options and the `server.http.*` configuration keys they come from: declared
 * here (schema, meaning, default) once; provider/server-options.ts puts them under `server.http`, and
 * docs/configuration.md is generated from the comments here. The gateway (`createGateway`) takes the
 * same limits.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import type { ServerTlsOptions } from '../transport/tls-options.js';

/** `server.http.port` when the provider serves no HTTP. */
export const HTTP_OFF = -1;

export const httpConfigSchema = z.strictObject({
  /** Port of the HTTP/JSON entry (POST /<service>/<method>); 0 picks a free one, -1 serves no HTTP. Default -1. */
  port: z.number().int().min(-1).max(65535),
  /** Interface the HTTP entry listens on. Default '127.0.0.1'. */
  host: z.string().min(1),
  /** Largest request body, bytes; a larger one is answered 413 before it is read. Default 1048576 (1 MiB). */
  maxBodyBytes: z.number().int().min(16),
  /** Time a client has to send a request's headers, ms; then 408. Default 10000. */
  headersTimeoutMs: z.number().int().min(10),
  /** Time a client has to send a request's body once its headers arrived, ms; then 408. Default 10000. */
  bodyTimeoutMs: z.number().int().min(10),
  /** Idle time of a kept-alive HTTP connection before it is closed, ms. Default 5000. */
  keepAliveTimeoutMs: z.number().int().min(1),
  /** With server.tls set, serve plaintext HTTP on this port anyway (requests and credentials unencrypted; a warning at start names the port). Without it the entry serves HTTPS with server.tls's certificates and client certificates. Default false. */
  plaintext: z.boolean(),
});

export type HttpConfig = z.infer<typeof httpConfigSchema>;

export const DEFAULT_HTTP_CONFIG: HttpConfig = {
  port: HTTP_OFF,
  host: '127.0.0.1',
  maxBodyBytes: 1024 * 1024,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  plaintext: false,
};

/** What an HTTP server (the provider's entry or a gateway) is built with. */
export interface HttpOptions {
  /** Port; 0 picks a free one. */
  readonly port: number;
  readonly host: string;
  readonly maxBodyBytes: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** Serve plaintext although TLS is configured for the app (`plaintext: true`): warned about at start. */
  readonly plaintext: boolean;
  /**
   * Serve HTTPS with these (the app's `server.tls`: certificates reloaded with theirs, client
   * certificates when it asks for them, its handshake timeout); undefined serves plaintext HTTP.
   */
  readonly tls?: ServerTlsOptions | undefined;
}

/**
 * The entry's options, or undefined when `server.http.port` is -1 (no HTTP). With `tls` (the app's
 * `server.tls`) the entry serves HTTPS, unless `server.http.plaintext` asks for plaintext explicitly.
 */
export function resolveHttpOptions(
  config: HttpConfig,
  tls?: ServerTlsOptions | undefined,
): HttpOptions | undefined {
  if (config.port === HTTP_OFF) return undefined;
  return checkHttpOptions(
    { ...config, plaintext: config.plaintext && tls !== undefined, tls: config.plaintext ? undefined : tls },
    'server.http',
  );
}

/** Options given in code (the gateway), with the defaults filled in and checked. */
export function httpOptionsFrom(input: Partial<HttpOptions>, where: string): HttpOptions {
  const { tls, ...rest } = input;
  const merged = { ...DEFAULT_HTTP_CONFIG, ...dropUndefined(rest) };
  if (merged.port === HTTP_OFF) merged.port = 0;
  const parsed = httpConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path.join('.');
    throw new ConfigError(`${where}.${key}`, (merged as Record<string, unknown>)[key], issue.message);
  }
  const plaintext = parsed.data.plaintext && tls !== undefined;
  return checkHttpOptions({ ...parsed.data, plaintext, tls: parsed.data.plaintext ? undefined : tls }, where);
}

function checkHttpOptions(options: HttpOptions, where: string): HttpOptions {
  if (options.port < 0) {
    throw new ConfigError(`${where}.port`, options.port, 'a port from 0 to 65535 (0 picks a free one)');
  }
  return options;
}

function dropUndefined<T extends object>(input: T): Partial<T> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<T>;
}
