/**
 * The provider's server options and the `server.*` configuration keys they come from: declared here
 * (schema, meaning, default) once; config/callisto-config.ts composes them into the app's configuration,
 * and docs/configuration.md is generated from the comments here.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import type { ErrorExposure } from '../core/error-payload.js';
import {
  extensionNameSchema,
  type SerializerName,
  type TransportName,
} from '../extension/extension-names.js';
import { DEFAULT_ADAPTIVE_LIMIT_OPTIONS } from '../governance/adaptive-limit.js';
import {
  type ConcurrencyLimiterOptions,
  DEFAULT_CRITICAL_MARGIN,
  DEFAULT_SHEDDABLE_SHARE,
} from '../governance/concurrency-limiter.js';
import { providerLimitsSchema } from '../governance/limit-options.js';
import {
  DEFAULT_HTTP_CONFIG,
  HTTP_OFF,
  type HttpOptions,
  httpConfigSchema,
  resolveHttpOptions,
} from '../http/http-options.js';
import {
  type ConnectionConfig,
  type ConnectionOptions,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_QUEUED_BYTES,
  resolveConnectionOptions,
} from '../protocol/connection-options.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../protocol/frame.js';
import { DEFAULT_PROVIDER_WEIGHT } from '../registry/record-validation.js';
import { DEFAULT_SERVER_AUTH_CONFIG, serverAuthConfigSchema } from '../security/auth-options.js';
import {
  DEFAULT_SERVER_TLS_CONFIG,
  resolveServerTls,
  serverTlsConfigSchema,
} from '../transport/tls-options.js';
import { DEFAULT_TRANSPORT } from '../transport/transport.js';
import { plainAddress } from './forwarded-client.js';
import {
  DEFAULT_GRPC_CONFIG,
  type GrpcOptions,
  grpcConfigSchema,
  resolveGrpcOptions,
} from './grpc/grpc-options.js';
import { DEFAULT_LOAD_REPORT_MS } from './load-reports.js';

const positiveInt = z.number().int().positive();
/** A share of a limit: more than 0, at most 1. */
const share = z.number().gt(0).max(1);

export const serverConfigSchema = z.strictObject({
  /** Interface to listen on. Default '127.0.0.1'; '0.0.0.0' (or '::') serves other hosts. */
  host: z.string().min(1),
  /** Port; 0 picks a free one. Default 0. */
  port: z.number().int().min(0).max(65535),
  /** Host written to the registry, for consumers to connect to; '' means `host`, or for a wildcard `host` the first non-internal interface address (IPv4 first). Default ''. */
  advertiseHost: z
    .string()
    .regex(/^(?!(?:0\.0\.0\.0|::|\[::\]|0:0:0:0:0:0:0:0)$)(?![^:]*:[^:]*$)[^\s/]*$/)
    .describe(
      "'' or a host name or address consumers can reach: not a wildcard such as 0.0.0.0, without a port",
    ),
  /** Transport to listen on: 'tcp', or 'memory' (apps of the same process, no socket); announced to consumers. Default 'tcp'. */
  transport: extensionNameSchema<TransportName>(),
  /** Serializer names accepted from consumers; empty means all registered except v8 (trusted peers only: name it to accept it). Default []. */
  serializers: z.array(extensionNameSchema<SerializerName>()),
  /** Calls executing at once before new ones are answered Overloaded. Default 10000. */
  maxConcurrentCalls: positiveInt,
  /** Streams open at once on all connections of the server; one more is refused with Overloaded (maxStreamsPerConnection bounds each connection). Default 10000. */
  maxOpenStreams: positiveInt,
  /** Deadline-aware admission (docs/operations.md, "Overload protection"): each method learns its service time (the 10th percentile of its last 32 calls, at most 10 s old, once 16 are there), and a call whose remaining budget is already smaller is refused Overloaded before its arguments are decoded (it never runs; the consumer fails it over). Default true. */
  deadlineAdmission: z.boolean(),
  /** The adaptive concurrency limit (docs/operations.md, "Overload protection"): the provider learns how many calls it can have in flight from their latency and the event loop's delay (Gradient2-style) and, only while it is overloaded (its event loop saturated and its queue growing interval after interval: not for a burst or a closed loop of callers), refuses the calls beyond it Overloaded before decoding them (never run; the consumer fails them over), sheddable calls first. Default true. */
  adaptiveLimit: z.boolean(),
  /** The adaptive limit before anything is learnt; high, so that nothing is refused before the limit has learnt (the first window that queues brings it down to the calls actually in flight; an overload brings it down to what the provider serves). Default 10000. */
  adaptiveLimitInitial: positiveInt,
  /** The adaptive limit never goes below it. Default 20. */
  adaptiveLimitMin: positiveInt,
  /** The adaptive limit never goes above it (`maxConcurrentCalls` still applies). Default 10000. */
  adaptiveLimitMax: positiveInt,
  /** Queueing below this many ms (the recent latency less 1.5× the long-term one) does not lower the adaptive limit. Default 20. */
  adaptiveLimitSlackMs: z.number().min(0),
  /** Sheddable calls are admitted only below this share of the adaptive limit. Default 0.8. */
  adaptiveLimitSheddableShare: share,
  /** Critical calls are admitted up to this multiple of the adaptive limit (≥ 1). Default 1.5. */
  adaptiveLimitCriticalMargin: z.number().min(1),
  /** Load reports (docs/protocol.md, "Load reports"): the provider tells its consumers its calls in flight, its concurrency limit, its queue and its event loop's delay in a `callisto-load` attachment on at most one answer per connection per this many ms, when it changed, and on heartbeat pongs; the consumers' `p2c` balancer weighs them in. 0: never. Default 50. */
  loadReportMs: z.number().int().min(0),
  /** Send stack traces with errors. Default false. */
  exposeStack: z.boolean(),
  /** What handler errors tell callers: 'declared' (declared errors' fields, system errors scrubbed) or 'all' (trusted setups). Default 'declared'. */
  exposeErrors: z.enum(['declared', 'all']),
  /** Connections at once; more are closed as they arrive. Default 4096. */
  maxConnections: positiveInt,
  /** Connections at once from one remote address. Default 256. */
  maxConnectionsPerAddress: positiveInt,
  /** Share of maxConcurrentCalls and maxElementsInFlight one connection may hold (0–1]. Default 0.5. */
  connectionShare: share,
  /** Share of maxConcurrentCalls and maxElementsInFlight the connections of one remote address may hold together (0–1]. Default 0.5. */
  addressShare: share,
  /** Decoded argument elements held by executing calls, across connections. Default 2000000. */
  maxElementsInFlight: positiveInt,
  /** Addresses (IPs) of the HTTP gateways whose calls carry their client's address (attachment callisto-forwarded-client): per-address limits, auth and logs then see that client; from anyone else the attachment is dropped. Default [] (none trusted). */
  trustedGateways: z.array(z.string().min(1)),
  /** Largest accepted frame, bytes. Default 8388608 (8 MiB). */
  maxFrameBytes: z.number().int().min(1024),
  /** Response bytes queued on one connection before it stops reading. Default 8388608. */
  writeHighWaterBytes: positiveInt,
  /** Load-balancing weight announced to consumers. Default 100. */
  weight: z.number().int().nonnegative(),
  /** Free-form labels announced to consumers (`tag` is the routing tag, docs/routing.md). Default {}. */
  tags: z.record(z.string(), z.string()),
  /** The zone (availability zone, rack, region) this app runs in: announced as the `zone` label of its provider records (over tags.zone), and the zone its consumers prefer under a zone routing rule unless consumer.zone says otherwise (docs/routing.md). '' none. Default ''. */
  zone: z.string(),
  /** Processes serving the port (node:cluster; a primary registers one address): a number, or 'auto' for the machine's cores. Default 1 (this process). */
  workers: z.union([z.number().int().min(1).max(1024), z.literal('auto')]),
  /** The HTTP/JSON entry (docs/http.md): `port` (-1: none), `host`, body and timeout limits. */
  http: httpConfigSchema,
  /** The gRPC entry over HTTP/2 (docs/grpc.md): on by default on the provider's own port; limits of its connections and messages. */
  grpc: grpcConfigSchema,
  /** TLS: with `key` and `cert` set the server serves TLS only (its records say so; docs/security.md). */
  tls: serverTlsConfigSchema,
  /** Authentication and access rules for every provided service (docs/security.md). */
  auth: serverAuthConfigSchema,
  /** Services whose calls are logged one line each (caller, method, duration, outcome); '*' for all. Default []. */
  accessLog: z.array(z.string().min(1)),
  /** Rate and concurrency limits of the whole app (docs/governance.md): { rate, perApplication, perAddress: { perSecond, burst? }, executes }; as a variable, JSON. Default {} (none). */
  limits: providerLimitsSchema,
});

export type ServerConfig = z.infer<typeof serverConfigSchema>;

export const DEFAULT_SERVER_CONFIG: ServerConfig = {
  host: '127.0.0.1',
  port: 0,
  advertiseHost: '',
  transport: DEFAULT_TRANSPORT,
  serializers: [],
  maxConcurrentCalls: 10_000,
  maxOpenStreams: 10_000,
  deadlineAdmission: true,
  adaptiveLimit: true,
  adaptiveLimitInitial: DEFAULT_ADAPTIVE_LIMIT_OPTIONS.initialLimit,
  adaptiveLimitMin: DEFAULT_ADAPTIVE_LIMIT_OPTIONS.minLimit,
  adaptiveLimitMax: DEFAULT_ADAPTIVE_LIMIT_OPTIONS.maxLimit,
  adaptiveLimitSlackMs: DEFAULT_ADAPTIVE_LIMIT_OPTIONS.rttSlackMs,
  adaptiveLimitSheddableShare: DEFAULT_SHEDDABLE_SHARE,
  adaptiveLimitCriticalMargin: DEFAULT_CRITICAL_MARGIN,
  loadReportMs: DEFAULT_LOAD_REPORT_MS,
  exposeStack: false,
  exposeErrors: 'declared',
  maxConnections: 4096,
  maxConnectionsPerAddress: 256,
  connectionShare: 0.5,
  addressShare: 0.5,
  maxElementsInFlight: 2_000_000,
  trustedGateways: [],
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  writeHighWaterBytes: 8 * 1024 * 1024,
  weight: DEFAULT_PROVIDER_WEIGHT,
  tags: {},
  zone: '',
  workers: 1,
  http: DEFAULT_HTTP_CONFIG,
  grpc: DEFAULT_GRPC_CONFIG,
  tls: DEFAULT_SERVER_TLS_CONFIG,
  auth: DEFAULT_SERVER_AUTH_CONFIG,
  accessLog: [],
  limits: {},
};

/** What the server is built with (from `server.*` and the connection keys). */
export interface ServerOptions {
  /** Interface to listen on. */
  host: string;
  /** Port; 0 picks a free one, reported by `server.port`. */
  port: number;
  /** Host written to the registry; undefined: `host`, or 127.0.0.1 when `host` is 0.0.0.0 / ::. */
  advertiseHost: string | undefined;
  /**
   * Serializer names accepted from consumers; undefined: every registered serializer except those for
   * trusted peers only (`v8`), which are accepted only when named.
   */
  serializers: string[] | undefined;
  /** Calls executing at once, across connections; beyond it calls are answered Overloaded. */
  maxConcurrentCalls: number;
  /** Streams open at once across connections; beyond it a stream is refused Overloaded. */
  maxOpenStreams: number;
  /** Deadline-aware admission: calls whose budget is below the method's learnt service time are refused. */
  deadlineAdmission: boolean;
  /** The adaptive concurrency limit's options; undefined when `server.adaptiveLimit` is false. */
  adaptiveLimit: ConcurrencyLimiterOptions | undefined;
  /** At most one load report per connection per this many ms (load-reports.ts); 0: none. */
  loadReportMs: number;
  /** Send the provider's stack trace with errors. */
  exposeStack: boolean;
  /** What handler errors tell callers. */
  exposeErrors: ErrorExposure;
  /** Bytes of responses queued on one connection before it stops reading new requests. */
  writeHighWaterBytes: number;
  /** Connections at once; more are closed as they arrive. */
  maxConnections: number;
  /** Connections at once from one remote address. */
  maxConnectionsPerAddress: number;
  /** Share of `maxConcurrentCalls` and `maxElementsInFlight` one connection may hold. */
  connectionShare: number;
  /** Share of `maxConcurrentCalls` and `maxElementsInFlight` one remote address may hold. */
  addressShare: number;
  /** Decoded argument elements held by executing calls, across connections. */
  maxElementsInFlight: number;
  /** Addresses of the gateways whose forwarded client address is honoured (forwarded-client.ts). */
  trustedGateways: ReadonlySet<string>;
  connection: ConnectionOptions;
  /** The HTTP/JSON entry, or undefined when `server.http.port` is -1; HTTPS with `server.tls`. */
  http: HttpOptions | undefined;
  /** The gRPC entry (docs/grpc.md), or undefined when `server.grpc.enabled` is false. */
  grpc: GrpcOptions | undefined;
}

/** The server's options from the `server.*` keys and the app's connection keys. */
export function resolveServerOptions(server: ServerConfig, connection: ConnectionConfig): ServerOptions {
  return {
    host: server.host,
    port: server.port,
    advertiseHost: server.advertiseHost || undefined,
    serializers: server.serializers.length > 0 ? server.serializers : undefined,
    maxConcurrentCalls: server.maxConcurrentCalls,
    maxOpenStreams: server.maxOpenStreams,
    deadlineAdmission: server.deadlineAdmission,
    adaptiveLimit: server.adaptiveLimit
      ? {
          initialLimit: server.adaptiveLimitInitial,
          minLimit: server.adaptiveLimitMin,
          maxLimit: server.adaptiveLimitMax,
          rttSlackMs: server.adaptiveLimitSlackMs,
          sheddableShare: server.adaptiveLimitSheddableShare,
          criticalMargin: server.adaptiveLimitCriticalMargin,
        }
      : undefined,
    loadReportMs: server.loadReportMs,
    exposeStack: server.exposeStack,
    exposeErrors: server.exposeErrors,
    writeHighWaterBytes: server.writeHighWaterBytes,
    maxConnections: server.maxConnections,
    maxConnectionsPerAddress: server.maxConnectionsPerAddress,
    connectionShare: server.connectionShare,
    addressShare: server.addressShare,
    maxElementsInFlight: server.maxElementsInFlight,
    trustedGateways: new Set(server.trustedGateways.map(plainAddress)),
    // A provider opens no connection: the consumer-side settings do not apply.
    connection: resolveConnectionOptions(connection, {
      maxFrameBytes: server.maxFrameBytes,
      connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
      maxQueuedBytes: DEFAULT_MAX_QUEUED_BYTES,
    }),
    // TLS on every port: with server.tls the HTTP entry serves HTTPS (unless server.http.plaintext)
    http: resolveHttpOptions(
      server.http,
      server.http.port === HTTP_OFF ? undefined : resolveServerTls(server.tls),
    ),
    grpc: resolveGrpcOptions(server.grpc, server.host),
  };
}

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
  const adaptive = options.adaptiveLimit;
  if (adaptive !== undefined && adaptive.minLimit! > adaptive.maxLimit!) {
    throw new ConfigError(
      'server.adaptiveLimitMin',
      adaptive.minLimit,
      `at most server.adaptiveLimitMax (${adaptive.maxLimit})`,
    );
  }
}
