/**
 * The streaming frame decoder: pure and synchronous, bytes in, frames out. Handles frames split across
 * chunks (half packets) and many frames in one chunk (sticky packets). The header is checked (magic,
 * version, total length against the maximum) before any body byte is buffered; a violation throws a
 * `ProtocolError` and the decoder must not be used again.
 */
import {
  DEFAULT_MAX_FRAME_BYTES,
  type Frame,
  HEADER_BYTES,
  MAGIC_0,
  MAGIC_1,
  PROTOCOL_VERSION,
} from './frame.js';
import { ProtocolError } from './protocol-error.js';

export interface FrameDecoderOptions {
  /** Largest accepted frame, header included. Default 8 MiB. */
  maxFrameBytes: number;
}

export interface FrameDecoder {
  /** Feeds bytes; calls `onFrame` synchronously for every complete frame. Throws ProtocolError. */
  push(chunk: Buffer): void;
  /** Bytes held for an incomplete frame. */
  readonly bufferedBytes: number;
}

export function createFrameDecoder(
  onFrame: (frame: Frame) => void,
  options: Partial<FrameDecoderOptions> = {},
): FrameDecoder {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  /** Leftover bytes smaller than a header, or a frame being assembled. */
  let partial: Buffer | null = null;
  /** For a frame being assembled: its total length and how much is filled. */
  let partialTotal = 0;
  let partialFilled = 0;
  let failed = false;
  // One frame object reused for every frame: consumers must copy what they keep.
  const frame: Frame = {
    kind: 0,
    flags: 0,
    serializer: 0,
    status: 0,
    requestId: 0,
    meta: Buffer.alloc(0),
    body: Buffer.alloc(0),
  };

  /** Validates a header at `offset`, returns the frame's total length. */
  const checkHeader = (buf: Buffer, offset: number): number => {
    if (buf[offset] !== MAGIC_0 || buf[offset + 1] !== MAGIC_1) {
      throw new ProtocolError(
        `bad magic 0x${buf.readUInt16BE(offset).toString(16).padStart(4, '0')}: not a Callisto frame`,
      );
    }
    if (buf[offset + 2] !== PROTOCOL_VERSION) {
      throw new ProtocolError(
        `unsupported protocol version ${buf[offset + 2]} (this side speaks ${PROTOCOL_VERSION})`,
      );
    }
    const total = HEADER_BYTES + buf.readUInt32BE(offset + 12) + buf.readUInt32BE(offset + 16);
    if (total > maxFrameBytes) {
      throw new ProtocolError(
        `frame of ${total} bytes exceeds the maximum frame size of ${maxFrameBytes} bytes`,
      );
    }
    return total;
  };

  const emit = (buf: Buffer, offset: number, total: number): void => {
    const metaLength = buf.readUInt32BE(offset + 12);
    frame.kind = buf[offset + 3]!;
    frame.flags = buf[offset + 4]!;
    frame.serializer = buf[offset + 5]!;
    frame.status = buf[offset + 6]!;
    frame.requestId = buf.readUInt32BE(offset + 8);
    const metaStart = offset + HEADER_BYTES;
    frame.meta = buf.subarray(metaStart, metaStart + metaLength);
    frame.body = buf.subarray(metaStart + metaLength, offset + total);
    onFrame(frame);
  };

  /** Decodes whole frames from `buf`; keeps the tail. */
  const drain = (buf: Buffer): void => {
    let offset = 0;
    const length = buf.length;
    while (length - offset >= HEADER_BYTES) {
      const total = checkHeader(buf, offset);
      if (length - offset < total) {
        // Start assembling this frame in a buffer of its exact size.
        partial = Buffer.allocUnsafe(total);
        partialFilled = buf.copy(partial, 0, offset);
        partialTotal = total;
        return;
      }
      emit(buf, offset, total);
      offset += total;
    }
    if (offset < length) {
      partial = Buffer.from(buf.subarray(offset));
      partialTotal = 0;
      partialFilled = partial.length;
    }
  };

  const push = (chunk: Buffer): void => {
    if (failed) throw new ProtocolError('decoder already failed');
    try {
      if (partial === null) {
        drain(chunk);
        return;
      }
      if (partialTotal === 0) {
        // Fewer than HEADER_BYTES were left: join and decode again.
        const joined = Buffer.concat([partial, chunk]);
        partial = null;
        drain(joined);
        return;
      }
      const need = partialTotal - partialFilled;
      if (chunk.length < need) {
        partialFilled += chunk.copy(partial, partialFilled);
        return;
      }
      chunk.copy(partial, partialFilled, 0, need);
      const complete = partial;
      partial = null;
      emit(complete, 0, partialTotal);
      partialTotal = 0;
      if (chunk.length > need) drain(chunk.subarray(need));
    } catch (error) {
      failed = true;
      partial = null;
      throw error;
    }
  };

  return {
    push,
    get bufferedBytes() {
      return partial === null ? 0 : partialTotal === 0 ? partial.length : partialFilled;
    },
  };
}
