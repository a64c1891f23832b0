/**
 * A connection that speaks frames over a transport's byte stream, the same for both sides: the
 * streaming decoder (partial frames drawing on the side's budget), the batched frame writer, heartbeats
 * (a ping when idle, pongs bounded by what is queued for the peer, a silent peer closed after
 * its heartbeat timeout), the frame deadline (a frame that started must complete within
 * `frameTimeoutMs`), read pausing while too much is queued for a peer that does not read, and body
 * compression with its inflate bounds. The consumer's and the provider's connections build on it and see
 * only request, response and event frames.
 */

import type { Attachments } from '../core/invocation.js';
import type { Compressor } from '../serialization/compression/compressor.js';
import {
  BUILTIN_COMPRESSOR_TABLE,
  type CompressorTable,
} from '../serialization/compression/compressor-table.js';
import type { ByteStream } from '../transport/transport.js';
import type { ByteBudget } from './byte-budget.js';
import { type InflateLimits, maybeCompress } from './compression.js';
import { type Frame, FrameFlag, FrameKind } from './frame.js';
import { startFrameDeadline } from './frame-deadline.js';
import { createFrameDecoder } from './frame-decoder.js';
import { createFrameWriter, type FrameWriter } from './frame-writer.js';
import { type HeartbeatOptions, startHeartbeat } from './heartbeat.js';
import { ProtocolError } from './protocol-error.js';

/**
 * Pings are answered only while less than this is queued for the peer: a peer that floods pings and
 * reads nothing cannot make this side queue pongs without bound (the queued bytes reach it anyway, and
 * count as life on its side).
 */
export const PONG_QUEUE_LIMIT_BYTES = 1024 * 1024;

export interface FramedConnectionOptions {
  /** Largest frame accepted, header included. */
  readonly maxFrameBytes: number;
  readonly heartbeat: HeartbeatOptions;
  /** Once a frame has started to arrive it must be complete within this, ms. */
  readonly frameTimeoutMs: number;
  /** Bodies this large or larger are sent compressed; 0: off, and compressed bodies are refused. */
  readonly compressThresholdBytes: number;
  /** A compressed body may inflate to at most this multiple of its size. */
  readonly maxInflateRatio: number;
  /** The compressors this side reads (the app's `compressor` extensions). Default: the built-ins. */
  readonly compressors?: CompressorTable | undefined;
  /** The budget for partial frames, shared by the connections of one side. */
  readonly partialFrames: ByteBudget;
  /** Stop reading while more than this is queued for the peer (0: never). */
  readonly readPauseBytes: number;
  /** Attachments a pong carries (the provider's load report, docs/protocol.md); none: an empty pong. */
  readonly pongAttachments?: (() => Attachments) | undefined;
}

/** Why a connection is being closed by this side for what the peer did. */
export type PeerFailure =
  | { readonly kind: 'protocol'; readonly error: Error }
  | { readonly kind: 'silent'; readonly silentMs: number };

export interface FrameListener {
  /** A request, response or event frame; `receivedAt` is Date.now() when its bytes arrived. */
  onFrame(frame: Frame, receivedAt: number): void;
  /** This side's ping was answered after `rttMs`; `meta` is the pong's metadata (empty, or attachments). */
  onPong?(rttMs: number, meta: Buffer): void;
  /** The peer broke the protocol or a limit, or fell silent: the connection is destroyed right after. */
  onPeerFailure(failure: PeerFailure): void;
  /** The stream failed (e.g. a refused connect); `close` follows. */
  onStreamError?(error: Error): void;
  /** The stream closed, once, whatever closed it. */
  onClose(): void;
}

export interface FramedConnection {
  readonly stream: ByteStream;
  readonly writer: FrameWriter;
  /** When a frame last arrived, heartbeats included (ms, Date.now clock). */
  readonly lastReceived: number;
  /** Round trip of the last answered ping, ms (0 until measured). */
  readonly rttMs: number;
  /** Bounds for inflating the compressed bodies this side accepts. */
  readonly inflate: InflateLimits;
  /**
   * `body` compressed with `compressor` (or the one of that wire id), when compression is on, this side
   * has it and it is worth it; undefined otherwise.
   */
  compress(body: Uint8Array, compressor: Compressor | number): Uint8Array | undefined;
  /** Sends a ping now. */
  ping(): void;
  /** Sends what is queued, then ends the stream (the peer closes its side too). */
  end(): void;
  /** Closes the stream at once. */
  destroy(): void;
}

export function openFramedConnection(
  stream: ByteStream,
  options: FramedConnectionOptions,
  listener: FrameListener,
): FramedConnection {
  let rttMs = 0;
  let pingSentAt = 0;
  let readPaused = false;
  const threshold = options.compressThresholdBytes;
  const compressors = options.compressors ?? BUILTIN_COMPRESSOR_TABLE;
  const inflate: InflateLimits = {
    enabled: threshold > 0,
    maxBytes: options.maxFrameBytes,
    maxRatio: options.maxInflateRatio,
    compressors,
  };

  /** After a write that `stream` queued past its high-water mark. */
  const queuedPastHighWater = (): void => {
    if (!readPaused && options.readPauseBytes > 0 && stream.writableLength > options.readPauseBytes) {
      // The peer is not reading: stop taking more work from it until it catches up.
      readPaused = true;
      stream.pause();
    }
  };
  const writer = createFrameWriter({
    write: (batch) => {
      if (stream.destroyed || stream.writableEnded) return;
      if (!stream.write(batch)) queuedPastHighWater();
    },
    writeWithBody: (batch, body) => {
      if (stream.destroyed || stream.writableEnded) return;
      // corked, the header and the body leave in one writev. Written apart, the header goes as a
      // packet of its own and costs a syscall here and a wake-up on the peer (S4-64K, three runs
      // each: 49–54 % of the node:net baseline's MiB/s apart, 86–88 % together).
      stream.cork?.();
      stream.write(batch);
      const flowing = stream.write(body);
      stream.uncork?.();
      if (!flowing) queuedPastHighWater();
    },
    get pendingBytes() {
      return stream.writableLength;
    },
  });

  const peerFailed = (failure: PeerFailure): void => {
    if (stream.destroyed) return;
    listener.onPeerFailure(failure);
    stream.destroy();
  };

  const ping = (): void => {
    if (stream.destroyed) return;
    pingSentAt = Date.now();
    writer.heartbeat(0, false);
  };

  let receivedAt = 0;
  const decoder = createFrameDecoder(
    (frame) => {
      if (frame.kind !== FrameKind.Heartbeat) {
        listener.onFrame(frame, receivedAt);
        return;
      }
      if ((frame.flags & FrameFlag.Pong) === 0) {
        // A peer flooding pings while reading nothing gets no more pongs than fit the bound.
        if (writer.queuedBytes <= PONG_QUEUE_LIMIT_BYTES)
          writer.heartbeat(frame.requestId, true, options.pongAttachments?.());
      } else if (pingSentAt > 0) {
        rttMs = receivedAt - pingSentAt;
        pingSentAt = 0;
        listener.onPong?.(rttMs, frame.meta);
      }
    },
    { maxFrameBytes: options.maxFrameBytes, budget: options.partialFrames },
  );

  const heartbeat = startHeartbeat(options.heartbeat, ping, (silentMs) =>
    peerFailed({ kind: 'silent', silentMs }),
  );

  const frameDeadline = startFrameDeadline(decoder, options.frameTimeoutMs, (elapsedMs, bufferedBytes) =>
    peerFailed({
      kind: 'protocol',
      error: new ProtocolError(
        `a frame started ${elapsedMs} ms ago is still incomplete (${bufferedBytes} bytes so far; frameTimeoutMs ${options.frameTimeoutMs})`,
      ),
    }),
  );

  stream.on('data', (chunk: Uint8Array) => {
    receivedAt = Date.now();
    heartbeat.touch(receivedAt);
    try {
      // TCP and memory streams deliver Buffers; a transport of another kind may hand plain bytes.
      decoder.push(
        Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
      );
    } catch (error) {
      peerFailed({ kind: 'protocol', error: error as Error });
      return;
    }
    frameDeadline.observe(receivedAt);
  });
  stream.on('drain', () => {
    if (readPaused) {
      readPaused = false;
      stream.resume();
    }
  });
  stream.on('error', (error: Error) => listener.onStreamError?.(error));
  stream.on('close', () => {
    heartbeat.stop();
    frameDeadline.stop();
    decoder.dispose();
    listener.onClose();
  });

  return {
    stream,
    writer,
    get lastReceived() {
      return heartbeat.lastReceived;
    },
    get rttMs() {
      return rttMs;
    },
    inflate,
    compress(body, compressor) {
      const chosen = typeof compressor === 'number' ? compressors.byId(compressor) : compressor;
      return chosen === undefined
        ? undefined
        : maybeCompress(body, threshold, chosen, options.maxInflateRatio);
    },
    ping,
    end() {
      if (stream.destroyed || stream.writableEnded) return;
      writer.flush();
      stream.end();
    },
    destroy() {
      stream.destroy();
    },
  };
}
