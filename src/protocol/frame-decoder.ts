/**
 * The streaming frame decoder: pure and synchronous, bytes in, frames out. Handles frames split across
 * chunks (half packets) and many frames in one chunk (sticky packets). The header is checked (magic,
 * version, total length against the maximum) before any body byte is buffered; a violation throws a
 * `ProtocolError` and the decoder must not be used again.
 *
 * Memory follows the bytes that arrived, never a header's claim: a frame still arriving is kept as the
 * pieces that arrived (a chunk from the socket is exactly its bytes; pieces under
 * {@link SMALL_PIECE_BYTES} are copied together, so a peer that trickles a byte at a time does not cost
 * an object per byte), and joined into one buffer of the frame's size once its last byte is in: one
 * allocation and one copy per frame, however many chunks it came in. Beyond a per-connection
 * allowance, what is held draws on a budget shared by every connection of a side; when the budget is
 * spent the decoder throws, and the connection that needed more is closed.
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

/** Pieces of a frame still arriving smaller than this are copied together into one of this size. */
export const SMALL_PIECE_BYTES = 4096;
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
  /** Leftover bytes smaller than a header (a frame's start, before its lengths are known). */
  let leftover: Buffer | null = null;
  /** A frame being assembled: the pieces that arrived, its total length and how much arrived. */
  let pieces: Buffer[] = [];
  let partialTotal = 0;
  let partialFilled = 0;
  /** Where small pieces are copied together (the last of `pieces` while it has room), and its fill. */
  let small: Buffer | null = null;
  let smallUsed = 0;
  /** Bytes taken from the budget for what is held. */
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

  /**
   * Keeps `piece` (bytes of the frame being assembled), after checking the budget covers it. A large
   * piece is kept as it is when it is all of its memory (a socket chunk is) or `transient` (joined
   * before this push returns); else it is copied, so that no larger buffer is kept alive through it.
   */
  const hold = (piece: Buffer, transient = false): void => {
    cover(partialFilled + piece.length);
    partialFilled += piece.length;
    if (piece.length >= SMALL_PIECE_BYTES) {
      small = null;
      const whole = piece.byteOffset === 0 && piece.length === piece.buffer.byteLength;
      pieces.push(transient || whole ? piece : Buffer.from(piece));
      return;
    }
    if (small === null || smallUsed + piece.length > small.length) {
      // a buffer of its own (not the shared pool's slab, which would keep 8 KiB alive)
      small = Buffer.allocUnsafeSlow(SMALL_PIECE_BYTES);
      smallUsed = 0;
      pieces.push(small.subarray(0, 0));
    }
    piece.copy(small, smallUsed);
    smallUsed += piece.length;
    pieces[pieces.length - 1] = small.subarray(0, smallUsed);
  };

  /** Lets go of the pieces held (the small-piece buffer with them). */
  const dropPieces = (): void => {
    pieces = [];
    small = null;
  };

  /** Starts assembling a frame of `total` bytes from what `buf` holds at `offset`. */
  const startPartial = (buf: Buffer, offset: number, total: number): void => {
    partialTotal = total;
    partialFilled = 0;
    dropPieces();
    hold(buf.subarray(offset));
  };

  /** The frame being assembled, complete: its pieces joined (one allocation, one copy). */
  const joined = (): Buffer => {
    const complete = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, partialTotal);
    dropPieces();
    return complete;
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
    if (offset < length) leftover = Buffer.from(buf.subarray(offset));
  };

  const push = (chunk: Buffer): void => {
    if (failed) throw new ProtocolError('decoder already failed');
    try {
      if (leftover !== null) {
        // Fewer than HEADER_BYTES were left: join and decode again.
        const rejoined = Buffer.concat([leftover, chunk]);
        leftover = null;
        drain(rejoined);
        return;
      }
      if (partialTotal === 0) {
        drain(chunk);
        return;
      }
      const need = partialTotal - partialFilled;
      if (chunk.length < need) {
        hold(chunk);
        return;
      }
      hold(chunk.length === need ? chunk : chunk.subarray(0, need), true);
      const total = partialTotal;
      const complete = joined();
      partialTotal = 0;
      partialFilled = 0;
      releaseAll();
      emit(complete, 0, total);
      if (chunk.length > need) drain(chunk.subarray(need));
    } catch (error) {
      failed = true;
      leftover = null;
      dropPieces();
      releaseAll();
      throw error;
    }
  };

  return {
    push,
    get bufferedBytes() {
      return leftover !== null ? leftover.length : partialFilled;
    },
    get frames() {
      return frames;
    },
    dispose() {
      leftover = null;
      dropPieces();
      releaseAll();
    },
  };
}
