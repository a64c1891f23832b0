/**
 * The options of a framed connection, either side, and the app configuration keys they come from: this
 * file declares them (schema, meaning, default) once; config/callisto-config.ts composes them into the
 * app's configuration, and docs/configuration.md is generated from the comments here.
 */
import { z } from 'zod';
import { ConfigError } from '../core/config-error.js';
import type { CompressorTable } from '../serialization/compression/compressor-table.js';
import { DEFAULT_DECODE_LIMITS } from '../serialization/decode-limits.js';
import { DEFAULT_MAX_INFLATE_RATIO } from './compression.js';
import { DEFAULT_MAX_FRAME_BYTES } from './frame.js';
import {
  DEFAULT_HEARTBEAT_MISSED_LIMIT,
  DEFAULT_HEARTBEAT_OPTIONS,
  type HeartbeatOptions,
  MIN_HEARTBEAT_TIMEOUT_INTERVALS,
} from './heartbeat.js';
import {
  INITIAL_CONNECTION_WINDOW_BYTES,
  INITIAL_STREAM_WINDOW_BYTES,
  MAX_WINDOW_BYTES,
} from './stream-flow.js';

const positiveInt = z.number().int().positive();

/** The app-wide keys of connections (top level of the configuration). */
export const connectionConfigSchema = z.strictObject({
  /** Heartbeat interval on idle connections, ms. Default 30000. */
  heartbeatIntervalMs: positiveInt,
  /** A connection that receives nothing (heartbeats included) this long is given up as dead, ms; checked at each heartbeat interval, so at least 2 × heartbeatIntervalMs. 0: three heartbeat intervals. Default 0. */
  heartbeatTimeoutMs: z.number().int().nonnegative(),
  /** Request and response bodies this large or larger are compressed (with the call's `consumer.compressor`; a provider answers with the one its caller offered); 0 turns it off (and compressed bodies are refused). Default 0. */
  compressThresholdBytes: z.number().int().nonnegative(),
  /** A compressed body may inflate to at most this multiple of its size. Default 256. */
  maxInflateRatio: z.number().min(1),
  /** Elements (values) one request or answer body may decode into. Default 1000000. */
  maxDecodedElements: positiveInt,
  /** Once a frame has started to arrive it must be complete within this, ms. Default 30000. */
  frameTimeoutMs: positiveInt,
  /** Bytes of partial frames all connections of a provider (and, separately, of a consumer) may hold together. Default 67108864 (64 MiB). */
  maxPartialFrameBytes: z.number().int().min(1024),
  /** Receive window of one stream (docs/protocol.md, Streams): bytes of messages the peer may send ahead of what the application read; at least 65536 (the protocol's initial window, the rest is granted on opening). Default 65536. */
  streamWindowBytes: z.number().int().min(INITIAL_STREAM_WINDOW_BYTES).max(MAX_WINDOW_BYTES),
  /** Receive window of one connection for the messages of all its streams, bytes; at least 1048576 (the protocol's initial window). Default 1048576. */
  streamConnectionWindowBytes: z.number().int().min(INITIAL_CONNECTION_WINDOW_BYTES).max(MAX_WINDOW_BYTES),
  /** Largest stream message accepted or sent, bytes of its frame (at most the side's maxFrameBytes): a larger one fails its stream. Default 4194304. */
  maxStreamMessageBytes: z.number().int().min(1024),
  /** Streams one connection may have open at once; one more is refused with Overloaded. Default 100. */
  maxStreamsPerConnection: positiveInt,
  /** A stream with no message either way for this long is ended with Timeout, ms; 0: never. Default 0. */
  streamIdleTimeoutMs: z.number().int().nonnegative(),
});

export type ConnectionConfig = z.infer<typeof connectionConfigSchema>;

export const DEFAULT_CONNECTION_CONFIG: ConnectionConfig = {
  heartbeatIntervalMs: DEFAULT_HEARTBEAT_OPTIONS.intervalMs,
  heartbeatTimeoutMs: 0,
  compressThresholdBytes: 0,
  maxInflateRatio: DEFAULT_MAX_INFLATE_RATIO,
  maxDecodedElements: DEFAULT_DECODE_LIMITS.maxElements,
  frameTimeoutMs: 30_000,
  maxPartialFrameBytes: 64 * 1024 * 1024,
  streamWindowBytes: INITIAL_STREAM_WINDOW_BYTES,
  streamConnectionWindowBytes: INITIAL_CONNECTION_WINDOW_BYTES,
  maxStreamMessageBytes: 4 * 1024 * 1024,
  maxStreamsPerConnection: 100,
  streamIdleTimeoutMs: 0,
};

const DEFAULT_STREAM_CONFIG = {
  streamWindowBytes: DEFAULT_CONNECTION_CONFIG.streamWindowBytes,
  streamConnectionWindowBytes: DEFAULT_CONNECTION_CONFIG.streamConnectionWindowBytes,
  maxStreamMessageBytes: DEFAULT_CONNECTION_CONFIG.maxStreamMessageBytes,
  maxStreamsPerConnection: DEFAULT_CONNECTION_CONFIG.maxStreamsPerConnection,
  streamIdleTimeoutMs: DEFAULT_CONNECTION_CONFIG.streamIdleTimeoutMs,
};

/** The streams' options of a connection that was given none. */
export const DEFAULT_STREAM_OPTIONS: StreamOptions = resolveStreamOptions(DEFAULT_STREAM_CONFIG);

/** How long opening a connection may take by default (`consumer.connectTimeoutMs`), ms. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;
/** Bytes queued unsent on one connection before calls are refused, by default (`consumer.maxQueuedBytes`). */
export const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;

/** Options of one connection, either side. */
export interface ConnectionOptions {
  /** Largest frame accepted, header included (`server.maxFrameBytes`). */
  maxFrameBytes: number;
  /** Bytes that may wait unsent on one connection before new calls are rejected as Overloaded (consumer). */
  maxQueuedBytes: number;
  /** Consumer only: how long opening a connection may take. */
  connectTimeoutMs: number;
  heartbeat: HeartbeatOptions;
  /**
   * Bodies this large or larger are sent compressed; 0 turns compression off, and then
   * compressed bodies are refused too.
   */
  compressThresholdBytes: number;
  /** A compressed body may inflate to at most this multiple of its size. */
  maxInflateRatio: number;
  /** The compressors this side reads, by wire id (the app's `compressor` extensions). Default: the built-ins. */
  compressors?: CompressorTable | undefined;
  /** Elements (values) one body may decode into. */
  maxDecodedElements: number;
  /** Once a frame has started to arrive it must be complete within this, ms. */
  frameTimeoutMs: number;
  /** Bytes of partial frames all connections of one side may hold together. */
  maxPartialFrameBytes: number;
  /**
   * Consumer only: a connection with calls waiting that receives nothing this long (a ping sent halfway)
   * is suspected (consumer/suspicion.ts). 0 or absent: never.
   */
  suspectAfterMs?: number;
  /** Streams' windows and limits (docs/protocol.md, Streams); default DEFAULT_STREAM_OPTIONS. */
  streams?: StreamOptions;
}

/** The limits and windows of the streams of one connection. */
export interface StreamOptions {
  readonly windowBytes: number;
  readonly connectionWindowBytes: number;
  readonly maxMessageBytes: number;
  readonly maxStreamsPerConnection: number;
  readonly idleTimeoutMs: number;
}

/** The streams' options from the app's keys. */
export function resolveStreamOptions(
  config: Pick<
    ConnectionConfig,
    | 'streamWindowBytes'
    | 'streamConnectionWindowBytes'
    | 'maxStreamMessageBytes'
    | 'maxStreamsPerConnection'
    | 'streamIdleTimeoutMs'
  >,
): StreamOptions {
  return {
    windowBytes: config.streamWindowBytes,
    connectionWindowBytes: config.streamConnectionWindowBytes,
    maxMessageBytes: config.maxStreamMessageBytes,
    maxStreamsPerConnection: config.maxStreamsPerConnection,
    idleTimeoutMs: config.streamIdleTimeoutMs,
  };
}

/**
 * The heartbeat of the app's keys: `heartbeatTimeoutMs`, or three intervals when it is 0. Throws a
 * ConfigError for a timeout under two intervals (the silence is checked once per interval, and one
 * missed ping is never enough to give a peer up).
 */
export function resolveHeartbeatOptions(
  config: Pick<ConnectionConfig, 'heartbeatIntervalMs' | 'heartbeatTimeoutMs'>,
): HeartbeatOptions {
  const intervalMs = config.heartbeatIntervalMs;
  const timeoutMs = config.heartbeatTimeoutMs;
  if (timeoutMs === 0) return { intervalMs, timeoutMs: intervalMs * DEFAULT_HEARTBEAT_MISSED_LIMIT };
  const least = intervalMs * MIN_HEARTBEAT_TIMEOUT_INTERVALS;
  if (timeoutMs < least) {
    throw new ConfigError(
      'heartbeatTimeoutMs',
      timeoutMs,
      `0 (three heartbeat intervals) or at least ${MIN_HEARTBEAT_TIMEOUT_INTERVALS} × heartbeatIntervalMs = ${least}; raise it or lower heartbeatIntervalMs`,
    );
  }
  return { intervalMs, timeoutMs };
}

/** The options of a connection from the app's keys and the side's own. */
export function resolveConnectionOptions(
  config: ConnectionConfig,
  side: { maxFrameBytes: number; connectTimeoutMs: number; maxQueuedBytes: number },
): ConnectionOptions {
  return {
    maxFrameBytes: side.maxFrameBytes,
    maxQueuedBytes: side.maxQueuedBytes,
    connectTimeoutMs: side.connectTimeoutMs,
    heartbeat: resolveHeartbeatOptions(config),
    compressThresholdBytes: config.compressThresholdBytes,
    maxInflateRatio: config.maxInflateRatio,
    maxDecodedElements: config.maxDecodedElements,
    frameTimeoutMs: config.frameTimeoutMs,
    maxPartialFrameBytes: config.maxPartialFrameBytes,
    streams: resolveStreamOptions({
      ...DEFAULT_STREAM_CONFIG,
      ...config,
      maxStreamMessageBytes: Math.min(
        config.maxStreamMessageBytes ?? DEFAULT_STREAM_CONFIG.maxStreamMessageBytes,
        side.maxFrameBytes,
      ),
    }),
  };
}

/** Every default: a connection as an app with no configuration makes it (tools and tests). */
export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = resolveConnectionOptions(
  DEFAULT_CONNECTION_CONFIG,
  {
    maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
    maxQueuedBytes: DEFAULT_MAX_QUEUED_BYTES,
  },
);
