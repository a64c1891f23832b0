import { ConfigError } from '../config/config-error.js';
import type { ErrorExposure } from '../core/error-payload.js';
import { type ConnectionOptions, DEFAULT_CONNECTION_OPTIONS } from '../protocol/connection-options.js';

export interface ServerOptions {
  /** Interface to listen on. Default '127.0.0.1'; use '0.0.0.0' (with `advertiseHost`) to serve other hosts. */
  host: string;
  /** Port; 0 picks a free one, reported by `server.port`. Default 0. */
  port: number;
  /** Host written to the registry. Default: `host`, or 127.0.0.1 when `host` is 0.0.0.0 / ::. */
  advertiseHost: string | undefined;
  /**
   * Serializer names accepted from consumers. Default: every registered serializer except those for
   * trusted peers only (`v8`), which are accepted only when named here.
   */
  serializers: string[] | undefined;
  /** Calls executing at once, across connections; beyond it calls are answered Overloaded. Default 10000. */
  maxConcurrentCalls: number;
  /** Send the provider's stack trace with errors. Default false. */
  exposeStack: boolean;
  /** What handler errors tell callers: 'declared' (default) or 'all' (trusted setups). */
  exposeErrors: ErrorExposure;
  /** Bytes of responses queued on one connection before it stops reading new requests. Default 8 MiB. */
  writeHighWaterBytes: number;
  /** Connections at once; more are closed as they arrive. Default 4096. */
  maxConnections: number;
  /** Connections at once from one remote address. Default 256. */
  maxConnectionsPerAddress: number;
  /** Share of `maxConcurrentCalls` and `maxElementsInFlight` one connection may hold. Default 0.5. */
  connectionShare: number;
  /** Share of `maxConcurrentCalls` and `maxElementsInFlight` one remote address may hold. Default 0.5. */
  addressShare: number;
  /** Decoded argument elements held by executing calls, across connections. Default 2,000,000. */
  maxElementsInFlight: number;
  connection: ConnectionOptions;
}

export const DEFAULT_SERVER_OPTIONS: ServerOptions = {
  host: '127.0.0.1',
  port: 0,
  advertiseHost: undefined,
  serializers: undefined,
  maxConcurrentCalls: 10_000,
  exposeStack: false,
  exposeErrors: 'declared',
  writeHighWaterBytes: 8 * 1024 * 1024,
  maxConnections: 4096,
  maxConnectionsPerAddress: 256,
  connectionShare: 0.5,
  addressShare: 0.5,
  maxElementsInFlight: 2_000_000,
  connection: DEFAULT_CONNECTION_OPTIONS,
};

/**
 * Checks what the schema cannot check key by key; throws a ConfigError naming the keys and the fix.
 * A connection's share of the decoded-elements budget must hold one body of the largest size allowed,
 * or such a call could never be admitted anywhere.
 */
export function checkServerOptions(options: ServerOptions): void {
  const perConnection = Math.floor(options.connectionShare * options.maxElementsInFlight);
  if (perConnection < options.connection.maxDecodedElements) {
    throw new ConfigError(
      'server.maxElementsInFlight',
      options.maxElementsInFlight,
      `at least maxDecodedElements / server.connectionShare = ${Math.ceil(
        options.connection.maxDecodedElements / options.connectionShare,
      )} (a connection's share, ${perConnection}, must hold one body of maxDecodedElements ${options.connection.maxDecodedElements} elements); raise it or lower maxDecodedElements`,
    );
  }
}
