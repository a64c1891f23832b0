/**
 * The streaming frame decoder: pure and synchronous, bytes in, frames out. Handles frames split across
 * chunks (half packets) and many frames in one chunk (sticky packets). The header is checked (magic,
 * version, total length against the maximum) before any body byte is buffered; a violation throws a
 * `ProtocolError` and the decoder must not be used again.
 *
 * Memory follows the bytes that arrived, never a header's claim: a frame still arriving is assembled in
 * a buffer that starts at twice what has arrived (at least {@link INITIAL_PARTIAL_BYTES}) and doubles as
 * more comes, up to the frame's size. Beyond a per-connection allowance, that buffer draws on a budget
 * shared by every connection of a side; when the budget is spent the decoder throws, and the connection
 * that needed more is closed.
 */
import { type ByteBudget, UNLIMITED_BUDGET } from './byte-budget.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  type Frame,
  HEADER_BYTES,
  MAGIC_0,
  MAGIC_1,
  PROTOCOL_VERSION,
} from './frame.js';
import { ProtocolError } from './protocol-error.js';

/** The metadata of a frame without any (shared: frames are read, never written to). */
const NO_META = Buffer.alloc(0);

/** Smallest buffer allocated for a frame still arriving. */
export const INITIAL_PARTIAL_BYTES = 512;
/** Bytes of a partial frame a connection may hold without drawing on the shared budget. */
export const DEFAULT_PARTIAL_ALLOWANCE_BYTES = 16 * 1024;

export interface FrameDecoderOptions {
  /** Largest accepted frame, header included. Default 8 MiB. */
  maxFrameBytes: number;
  /** Budget shared by the connections of one side for partial frames. Default: unlimited. */
  budget: ByteBudget;
  /** Bytes of a partial frame held outside the budget. Default 16 KiB. */
  allowanceBytes: number;
}

export interface FrameDecoder {
  /** Feeds bytes; calls `onFrame` synchronously for every complete frame. Throws ProtocolError. */
  push(chunk: Buffer): void;
  /** Bytes received for an incomplete frame (0 when none is incomplete). */
  readonly bufferedBytes: number;
  /** Frames decoded so far (tells a watcher whether the incomplete frame is still the same one). */
  readonly frames: number;
  /** Gives back what this decoder holds from the budget; call once the connection is closed. */
  dispose(): void;
}

export function createFrameDecoder(
  onFrame: (frame: Frame) => void,
  options: Partial<FrameDecoderOptions> = {},
): FrameDecoder {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const budget = options.budget ?? UNLIMITED_BUDGET;
  const allowance = options.allowanceBytes ?? DEFAULT_PARTIAL_ALLOWANCE_BYTES;
  /** Leftover bytes smaller than a header, or a frame being assembled. */
  let partial: Buffer | null = null;
  /** For a frame being assembled: its total length and how much is filled. */
  let partialTotal = 0;
  let partialFilled = 0;
  /** Bytes taken from the budget for `partial`. */
  let reserved = 0;
  let frames = 0;
  let failed = false;
  // One frame object reused for every frame: consumers must copy what they keep.
  const frame: Frame = {
    kind: 0,
    flags: 0,
    serializer: 0,
    status: 0,
    compressor: 0,
    requestId: 0,
    meta: NO_META,
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
    frame.compressor = buf[offset + 7]!;
    frame.requestId = buf.readUInt32BE(offset + 8);
    const metaStart = offset + HEADER_BYTES;
    // Most answers carry no metadata: no view is made for them.
    frame.meta = metaLength === 0 ? NO_META : buf.subarray(metaStart, metaStart + metaLength);
    frame.body = buf.subarray(metaStart + metaLength, offset + total);
    frames++;
    onFrame(frame);
  };

  /** Makes the budget cover a partial buffer of `capacity` bytes; throws when it cannot. */
  const cover = (capacity: number): void => {
    const needed = capacity > allowance ? capacity - allowance : 0;
    if (needed <= reserved) return;
    if (!budget.tryReserve(needed - reserved)) {
      throw new ProtocolError(
        `the budget of ${budget.limit} bytes for partial frames (maxPartialFrameBytes) is spent: ` +
          `cannot hold ${capacity} bytes of a ${partialTotal}-byte frame`,
      );
    }
    reserved = needed;
  };

  const releaseAll = (): void => {
    if (reserved > 0) budget.release(reserved);
    reserved = 0;
  };

  /** Starts assembling a frame of `total` bytes from what `buf` holds at `offset`. */
  const startPartial = (buf: Buffer, offset: number, total: number): void => {
    const have = buf.length - offset;
    const capacity = Math.min(total, Math.max(2 * have, INITIAL_PARTIAL_BYTES));
    partialTotal = total;
    cover(capacity);
    partial = Buffer.allocUnsafe(capacity);
    partialFilled = buf.copy(partial, 0, offset);
  };

  /** Grows the partial buffer to hold at least `needed` bytes (doubling, up to the frame's size). */
  const grow = (needed: number): void => {
    const current = partial!;
    const capacity = Math.min(partialTotal, Math.max(needed, current.length * 2));
    cover(capacity);
    const grown = Buffer.allocUnsafe(capacity);
    current.copy(grown, 0, 0, partialFilled);
    partial = grown;
  };

  /** Decodes whole frames from `buf`; keeps the tail. */
  const drain = (buf: Buffer): void => {
    let offset = 0;
    const length = buf.length;
    while (length - offset >= HEADER_BYTES) {
      const total = checkHeader(buf, offset);
      if (length - offset < total) {
        startPartial(buf, offset, total);
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
        if (partialFilled + chunk.length > partial.length) grow(partialFilled + chunk.length);
        partialFilled += chunk.copy(partial!, partialFilled);
        return;
      }
      if (partial.length < partialTotal) grow(partialTotal);
      const complete = partial!;
      chunk.copy(complete, partialFilled, 0, need);
      partial = null;
      const total = partialTotal;
      partialTotal = 0;
      partialFilled = 0;
      releaseAll();
      emit(complete, 0, total);
      if (chunk.length > need) drain(chunk.subarray(need));
    } catch (error) {
      failed = true;
      partial = null;
      releaseAll();
      throw error;
    }
  };

  return {
    push,
    get bufferedBytes() {
      return partial === null ? 0 : partialFilled;
    },
    get frames() {
      return frames;
    },
    dispose() {
      partial = null;
      releaseAll();
    },
  };
}
