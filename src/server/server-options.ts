import { type ConnectionOptions, DEFAULT_CONNECTION_OPTIONS } from '../transport/transport-options.js';

export interface ServerOptions {
  /** Interface to listen on. Default '127.0.0.1'; use '0.0.0.0' (with `advertiseHost`) to serve other hosts. */
  host: string;
  /** Port; 0 picks a free one, reported by `server.port`. Default 0. */
  port: number;
  /** Host written to the registry. Default: `host`, or 127.0.0.1 when `host` is 0.0.0.0 / ::. */
  advertiseHost: string | undefined;
  /** Serializer names accepted from consumers. Default: every registered serializer. */
  serializers: string[] | undefined;
  /** Calls executing at once, across connections; beyond it calls are answered Overloaded. Default 10000. */
  maxConcurrentCalls: number;
  /** Send the provider's stack trace with errors. Default false. */
  exposeStack: boolean;
  /** Bytes of responses queued on one connection before it stops reading new requests. Default 8 MiB. */
  writeHighWaterBytes: number;
  connection: ConnectionOptions;
}

export const DEFAULT_SERVER_OPTIONS: ServerOptions = {
  host: '127.0.0.1',
  port: 0,
  advertiseHost: undefined,
  serializers: undefined,
  maxConcurrentCalls: 10_000,
  exposeStack: false,
  writeHighWaterBytes: 8 * 1024 * 1024,
  connection: DEFAULT_CONNECTION_OPTIONS,
};
