/**
 * The gRPC entry's options and the `server.grpc.*` configuration keys they come from (docs/grpc.md):
 * declared here (schema, meaning, default) once; provider/server-options.ts puts them under
 * `server.grpc`, and docs/configuration.md is generated from the comments here.
 *
 * The entry is on by default, on the provider's own port: a connection that opens with the HTTP/2
 * preface (or negotiates `h2` by ALPN over TLS) is served as gRPC, every other one as Callisto's own
 * protocol, decided from its first byte.
 */
import { z } from 'zod';

/** `server.grpc.port` for the provider's own port (the entry shares it, told apart by the preface). */
export const GRPC_SAME_PORT = -1;

const positiveInt = z.number().int().positive();

export const grpcConfigSchema = z.strictObject({
  /** Serve gRPC (and Dubbo 3 Triple) over HTTP/2: h2c, and h2 by ALPN with server.tls. Default true. */
  enabled: z.boolean(),
  /** -1: on the provider's own port (connections told apart by the HTTP/2 preface); 0 or more: a port of its own (0 picks a free one). Default -1. */
  port: z.number().int().min(-1).max(65535),
  /** Interface the entry listens on when it has a port of its own; '' means server.host. Default ''. */
  host: z.string(),
  /** Largest message accepted or sent, bytes (checked from the 5-byte prefix, before it is buffered); a larger one ends its call with RESOURCE_EXHAUSTED. Default 4194304 (4 MiB). */
  maxMessageBytes: z.number().int().min(16),
  /** Streams (calls) open at once on one HTTP/2 connection (SETTINGS_MAX_CONCURRENT_STREAMS). Default 100. */
  maxConcurrentStreams: positiveInt,
  /** Largest header list (decompressed HPACK) of one request, bytes (SETTINGS_MAX_HEADER_LIST_SIZE); a larger one is refused. Default 16384. */
  maxHeaderListBytes: z.number().int().min(1024),
  /** Memory one HTTP/2 connection may hold (HPACK tables, queued frames), MiB; past it new streams are refused. Default 10. */
  maxSessionMemoryMb: positiveInt,
  /** Streams a client may reset (RST_STREAM) within one second before its connection is closed with GOAWAY ENHANCE_YOUR_CALM: the rapid reset attack (CVE-2023-44487) costs the server work for streams nobody waits for. Default 200. */
  maxResetsPerSecond: positiveInt,
  /** A connection with no stream open for this long is closed with GOAWAY, ms. Default 300000. */
  idleTimeoutMs: positiveInt,
  /** A stream whose client takes none of the messages waiting for it (its flow-control window stays shut) for this long is reset, ms. Default 60000. */
  stalledStreamTimeoutMs: positiveInt,
  /** Serve the standard health service grpc.health.v1.Health (SERVING while ready, NOT_SERVING once shutdown starts). Default true. */
  health: z.boolean(),
  /** Serve gRPC server reflection (grpc.reflection.v1 and v1alpha) for the services declared with protobuf, so that grpcurl and similar tools can list and call them. Default true. */
  reflection: z.boolean(),
  /** Origins whose web pages may call the entry (gRPC-Web and Connect from a browser, CORS): each exactly as browsers send it in `Origin` (`https://app.example.com`, a port if not the scheme's), or '*' for any page. Default [] (no cross-origin calls). */
  corsOrigins: z.array(
    z.union([
      z.literal('*'),
      z.string().regex(/^https?:\/\/[^/\s?#]+$/, 'an origin such as https://app.example.com'),
    ]),
  ),
});

export type GrpcConfig = z.infer<typeof grpcConfigSchema>;

export const DEFAULT_GRPC_CONFIG: GrpcConfig = {
  enabled: true,
  port: GRPC_SAME_PORT,
  host: '',
  maxMessageBytes: 4 * 1024 * 1024,
  maxConcurrentStreams: 100,
  maxHeaderListBytes: 16 * 1024,
  maxSessionMemoryMb: 10,
  maxResetsPerSecond: 200,
  idleTimeoutMs: 300_000,
  stalledStreamTimeoutMs: 60_000,
  health: true,
  reflection: true,
  corsOrigins: [],
};

/** What the gRPC entry is built with; undefined in ServerOptions when `server.grpc.enabled` is false. */
export interface GrpcOptions {
  /** -1 (GRPC_SAME_PORT): the provider's own port; else a port of its own (0: a free one). */
  readonly port: number;
  /** The interface of a port of its own. */
  readonly host: string;
  readonly maxMessageBytes: number;
  readonly maxConcurrentStreams: number;
  readonly maxHeaderListBytes: number;
  readonly maxSessionMemoryMb: number;
  readonly maxResetsPerSecond: number;
  readonly idleTimeoutMs: number;
  readonly stalledStreamTimeoutMs: number;
  readonly health: boolean;
  readonly reflection: boolean;
  /** Origins whose pages may call (CORS); empty: none. */
  readonly corsOrigins: readonly string[];
}

/** The entry's options, or undefined when it is off; `serverHost` is `server.host`. */
export function resolveGrpcOptions(config: GrpcConfig, serverHost: string): GrpcOptions | undefined {
  if (!config.enabled) return undefined;
  const { enabled: _, ...rest } = config;
  return { ...rest, host: config.host || serverHost };
}
