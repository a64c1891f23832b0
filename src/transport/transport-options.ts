import { DEFAULT_MAX_FRAME_BYTES } from '../protocol/frame.js';
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
  /** Bodies this large or larger are sent DEFLATE-compressed; 0 turns compression off. Default 0. */
  compressThresholdBytes: number;
}

export const DEFAULT_CONNECTION_OPTIONS: ConnectionOptions = {
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  maxQueuedBytes: 64 * 1024 * 1024,
  connectTimeoutMs: 3_000,
  heartbeat: DEFAULT_HEARTBEAT_OPTIONS,
  compressThresholdBytes: 0,
};
