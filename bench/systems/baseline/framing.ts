/**
 * The baseline's wire format: each frame is a 4-byte big-endian length, then that many bytes of UTF-8
 * JSON. Requests are `{id, method, args}`, responses `{id, result}` or `{id, error}`.
 *
 * Streams (S6 to S8): a request `{id, method: 'ticks', args: [count]}` opens a server stream; each of
 * its messages is a frame `{id, item}` whose body is msgpack (msgpackr, records off: Callisto's default
 * serializer) and whose length has its top bit set; `{id, end: true}` (or `{id, error}`) ends it, and
 * `{id, method: '$cancel', args: [streamId]}` from the client stops it.
 *
 * Bytes (S4): a frame whose length has bit 30 set ({@link RAW_FLAG}) is a call of `echoBytes` from the
 * client, or its answer from the server: a 4-byte big-endian id, then the bytes themselves, no JSON.
 * It is written as two buffers (the 8 bytes of length and id, then the caller's bytes, uncopied).
 */
import type { Socket } from 'node:net';
import { Packr } from 'msgpackr';

/** Frames longer than this are refused. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** Set in a frame's length when its body is msgpack (a stream message) rather than JSON. */
export const PACKED_FLAG = 0x8000_0000;

/** Set in a frame's length when its body is an id and raw bytes (echoBytes). */
export const RAW_FLAG = 0x4000_0000;

/** A raw-bytes frame: an `echoBytes` call (client to server) or its answer (server to client). */
export interface BaselineBytes {
  id: number;
  bytes: Buffer;
}

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
 * A streaming decoder: feed it socket chunks, it calls `onMessage` once per complete frame, or
 * `onBytes` for a raw-bytes frame (its bytes a view of the received buffer). Whole frames inside a
 * chunk are parsed straight from the chunk; the chunks of a frame that straddles several are kept in a
 * list and joined once, when the last one arrives.
 */
export function createFrameReader(
  onMessage: (message: unknown) => void,
  onBytes: (message: BaselineBytes) => void = () => {},
): (chunk: Buffer) => void {
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  /** The whole size (length prefix included) of the frame being joined, once its prefix arrived. */
  let wanted = 0;
  const parse = (buffer: Buffer): void => {
    let offset = 0;
    while (buffer.length - offset >= 4) {
      const header = buffer.readUInt32BE(offset);
      const packed = header >= PACKED_FLAG;
      const raw = !packed && header >= RAW_FLAG;
      const length = packed ? header - PACKED_FLAG : raw ? header - RAW_FLAG : header;
      if (length > MAX_FRAME_BYTES) throw new Error(`frame of ${length} bytes exceeds ${MAX_FRAME_BYTES}`);
      const end = offset + 4 + length;
      if (end > buffer.length) {
        wanted = 4 + length;
        break;
      }
      if (raw) onBytes({ id: buffer.readUInt32BE(offset + 4), bytes: buffer.subarray(offset + 8, end) });
      else
        onMessage(
          packed
            ? packr.unpack(buffer.subarray(offset + 4, end))
            : JSON.parse(buffer.toString('utf8', offset + 4, end)),
        );
      offset = end;
    }
    if (offset < buffer.length) {
      pending.push(buffer.subarray(offset));
      pendingBytes = buffer.length - offset;
    }
  };
  return (chunk) => {
    if (pendingBytes === 0) {
      wanted = 0;
      parse(chunk);
      return;
    }
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (wanted === 0 && pendingBytes >= 4) wanted = 1; // the prefix is complete now: join to read it
    if (wanted > pendingBytes) return;
    const joined = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending.length = 0;
    pendingBytes = 0;
    wanted = 0;
    parse(joined);
  };
}

/** Writes a raw-bytes frame: 8 bytes of length and id, then `bytes` as they are (no copy). */
export function writeBytesFrame(socket: Socket, id: number, bytes: Uint8Array): void {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(4 + bytes.length + RAW_FLAG, 0);
  head.writeUInt32BE(id, 4);
  socket.write(head);
  socket.write(bytes);
}

/**
 * Writes frames to `socket`, batching every frame produced in one tick: the first write of a tick corks
 * the socket, and a `process.nextTick` uncorks it, so the tick's frames leave in one `writev`.
 */
export interface BatchedWriter {
  (message: BaselineRequest | BaselineResponse): void;
  /** A raw-bytes frame in the same batch. */
  bytes(id: number, bytes: Uint8Array): void;
}

export function createBatchedWriter(socket: Socket): BatchedWriter {
  let corked = false;
  const uncork = (): void => {
    corked = false;
    socket.uncork();
  };
  const batch = (): void => {
    if (corked) return;
    corked = true;
    socket.cork();
    process.nextTick(uncork);
  };
  const send = (message: BaselineRequest | BaselineResponse): void => {
    batch();
    socket.write(encodeFrame(message));
  };
  send.bytes = (id: number, bytes: Uint8Array): void => {
    batch();
    writeBytesFrame(socket, id, bytes);
  };
  return send;
}
