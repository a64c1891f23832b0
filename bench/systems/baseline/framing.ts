/**
 * The baseline's wire format: each frame is a 4-byte big-endian length, then that many bytes of UTF-8
 * JSON. Requests are `{id, method, args}`, responses `{id, result}` or `{id, error}`.
 *
 * Streams (S6 to S8): a request `{id, method: 'ticks', args: [count]}` opens a server stream; each of
 * its messages is a frame `{id, item}` whose body is msgpack (msgpackr, records off: Callisto's default
 * serializer) and whose length has its top bit set; `{id, end: true}` (or `{id, error}`) ends it, and
 * `{id, method: '$cancel', args: [streamId]}` from the client stops it.
 */
import type { Socket } from 'node:net';
import { Packr } from 'msgpackr';

/** Frames longer than this are refused. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Set in a frame's length when its body is msgpack (a stream message) rather than JSON. */
export const PACKED_FLAG = 0x8000_0000;

/** The method name of a stream cancel request. */
export const CANCEL_METHOD = '$cancel';

/** One message of a stream. */
export interface BaselineStreamItem {
  id: number;
  item: unknown;
}

const packr = new Packr({ useRecords: false });

/** One stream-message frame: length (with {@link PACKED_FLAG}) and msgpack body in a single buffer. */
export function encodePackedFrame(message: BaselineStreamItem): Buffer {
  const body = packr.pack(message);
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length + PACKED_FLAG, 0);
  body.copy(frame, 4);
  return frame;
}

export interface BaselineRequest {
  id: number;
  method: string;
  args: unknown[];
}

export interface BaselineResponse {
  id: number;
  result?: unknown;
  error?: string;
  /** The stream `id` has ended. */
  end?: true;
}

/** One frame: length prefix and JSON body in a single buffer. */
export function encodeFrame(message: BaselineRequest | BaselineResponse): Buffer {
  const body = JSON.stringify(message);
  const length = Buffer.byteLength(body);
  const frame = Buffer.allocUnsafe(4 + length);
  frame.writeUInt32BE(length, 0);
  frame.write(body, 4, length, 'utf8');
  return frame;
}

/**
 * A streaming decoder: feed it socket chunks, it calls `onMessage` once per complete frame. It keeps a
 * single pending buffer holding an incomplete frame and joins it to the next chunk only then, so whole
 * frames inside a chunk are parsed straight from the chunk.
 */
export function createFrameReader(onMessage: (message: unknown) => void): (chunk: Buffer) => void {
  let pending: Buffer | undefined;
  return (chunk) => {
    let buffer = chunk;
    if (pending !== undefined) {
      buffer = Buffer.concat([pending, chunk]);
      pending = undefined;
    }
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const header = buffer.readUInt32BE(offset);
      const packed = header >= PACKED_FLAG;
      const length = packed ? header - PACKED_FLAG : header;
      if (length > MAX_FRAME_BYTES) throw new Error(`frame of ${length} bytes exceeds ${MAX_FRAME_BYTES}`);
      const end = offset + 4 + length;
      if (end > buffer.length) break;
      onMessage(
        packed
          ? packr.unpack(buffer.subarray(offset + 4, end))
          : JSON.parse(buffer.toString('utf8', offset + 4, end)),
      );
      offset = end;
    }
    if (offset < buffer.length) pending = buffer.subarray(offset);
  };
}

/**
 * Writes frames to `socket`, batching every frame produced in one tick: the first write of a tick corks
 * the socket, and a `process.nextTick` uncorks it, so the tick's frames leave in one `writev`.
 */
export function createBatchedWriter(socket: Socket): (message: BaselineRequest | BaselineResponse) => void {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  return (message) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    socket.write(encodeFrame(message));
  };
}
