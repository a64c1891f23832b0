import { DEFAULT_DECODE_LIMITS } from '../serialization/decode-limits.js';
import { DEFAULT_MAX_INFLATE_RATIO } from './compression.js';
import { DEFAULT_MAX_FRAME_BYTES } from './frame.js';
import { DEFAULT_HEARTBEAT_OPTIONS, type HeartbeatOptions } from './heartbeat.js';

/** Options of one connection, either side. */
export interface ConnectionOptions {
  /** Largest frame accepted, header included. Default 8 MiB. */
  maxFrameBytes: number;
  /** Bytes that may wait unsent on one connection before new calls are rejected as Overloaded. Default 64 MiB. */
  maxQueuedBytes: number;
  /** Consumer only: how long opening a connection may take. Default 3000. */
  connectTimeoutMs: number;
  heartbeat: HeartbeatOptions;
  /**
   * Bodies this large or larger are sent DEFLATE-compressed; 0 turns compression off, and then
   * compressed bodies are refused too. Default 0.
   */
  compressThresholdBytes: number;
  /** A compressed body may inflate to at most this multiple of its size. Default 256. */
  maxInflateRatio: number;
  /** Elements (values) one body may decode into. Default 1,000,000. */
  maxDecodedElements: number;
  /** Once a frame has started to arrive it must be complete within this, ms. Default 30000. */
  frameTimeoutMs: number;
  /** Bytes of partial frames all connections of one side may hold together. Default 64 MiB. */
  maxPartialFrameBytes: number;
}

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = {
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  maxQueuedBytes: 64 * 1024 * 1024,
  connectTimeoutMs: 3_000,
  heartbeat: DEFAULT_HEARTBEAT_OPTIONS,
  compressThresholdBytes: 0,
  maxInflateRatio: DEFAULT_MAX_INFLATE_RATIO,
  maxDecodedElements: DEFAULT_DECODE_LIMITS.maxElements,
  frameTimeoutMs: 30_000,
  maxPartialFrameBytes: 64 * 1024 * 1024,
};

/**
 * Pings are answered only while less than this is queued for the peer: a peer that floods pings and
 * reads nothing cannot make this side queue pongs without bound (the queued bytes reach it anyway, and
 * count as life on its side).
 */
export const PONG_QUEUE_LIMIT_BYTES = 1024 * 1024;
