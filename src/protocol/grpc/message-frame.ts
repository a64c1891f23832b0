/**
 * gRPC's length-prefixed messages (gRPC over HTTP/2, "Length-Prefixed-Message"): a 1-byte compressed
 * flag, a 4-byte big-endian length, then the message. The same framing carries gRPC-Web and Connect's
 * streaming bodies (where the flag's bit 1 marks the end-of-stream / trailers message).
 *
 * The decoder is pure and synchronous (bytes in, messages out) and checks each length against
 * `maxMessageBytes` from the 5-byte prefix, before buffering anything of the message, so a peer that
 * claims 4 GiB costs 5 bytes and gets a clear error. It buffers at most one partial message.
 */

export const GRPC_PREFIX_BYTES = 5;

/** Flag bit 0: the message is compressed with the stream's `grpc-encoding`. */
export const FLAG_COMPRESSED = 0x01;
/** Flag bit 7 (gRPC-Web) / bit 1 (Connect): the message is the stream's trailers / end-of-stream. */
export const FLAG_GRPC_WEB_TRAILERS = 0x80;
export const FLAG_CONNECT_END_STREAM = 0x02;

export interface GrpcMessage {
  /** The flag byte as sent. */
  readonly flags: number;
  /** The message bytes (still compressed when `flags & FLAG_COMPRESSED`). */
  readonly data: Buffer;
}

/** A message `payload` with its prefix: one buffer, ready to write. */
export function encodeGrpcMessage(payload: Uint8Array, flags = 0): Buffer {
  const out = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + payload.length);
  out[0] = flags;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, GRPC_PREFIX_BYTES);
  return out;
}

/** A length prefix over `maxMessageBytes`: the stream must be refused (`RESOURCE_EXHAUSTED`). */
export class GrpcMessageTooLargeError extends Error {
  override name = 'GrpcMessageTooLargeError';
  constructor(
    readonly length: number,
    readonly maxMessageBytes: number,
  ) {
    super(`message of ${length} bytes is over the limit of ${maxMessageBytes}`);
  }
}

export class GrpcMessageDecoder {
  readonly #maxMessageBytes: number;
  #chunks: Buffer[] = [];
  #buffered = 0;

  constructor(maxMessageBytes: number) {
    this.#maxMessageBytes = maxMessageBytes;
  }

  /** Bytes held for a message not yet complete. */
  get buffered(): number {
    return this.#buffered;
  }

  /**
   * The messages completed by `chunk`, in order. Throws GrpcMessageTooLargeError when a prefix claims
   * more than the limit; the decoder is then unusable.
   */
  push(chunk: Buffer): GrpcMessage[] {
    if (chunk.length === 0) return [];
    if (this.#buffered === 0 && chunk.length >= GRPC_PREFIX_BYTES) {
      // the usual unary request: one chunk holding exactly one whole message
      // (a length over the limit goes the general way, which throws)
      const length = chunk.readUInt32BE(1);
      if (length <= this.#maxMessageBytes && chunk.length === GRPC_PREFIX_BYTES + length) {
        return [{ flags: chunk[0]!, data: chunk.subarray(GRPC_PREFIX_BYTES) }];
      }
    }
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const messages: GrpcMessage[] = [];
    while (this.#buffered >= GRPC_PREFIX_BYTES) {
      const head = this.#peek(GRPC_PREFIX_BYTES);
      const length = head.readUInt32BE(1);
      if (length > this.#maxMessageBytes) throw new GrpcMessageTooLargeError(length, this.#maxMessageBytes);
      if (this.#buffered < GRPC_PREFIX_BYTES + length) break;
      const whole = this.#take(GRPC_PREFIX_BYTES + length);
      messages.push({ flags: whole[0]!, data: whole.subarray(GRPC_PREFIX_BYTES) });
    }
    return messages;
  }

  /** Whether the stream ended between messages (no partial message left): a truncated one is an error. */
  get atBoundary(): boolean {
    return this.#buffered === 0;
  }

  #peek(bytes: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= bytes) return first;
    const joined = Buffer.concat(this.#chunks);
    this.#chunks = [joined];
    return joined;
  }

  #take(bytes: number): Buffer {
    const joined = this.#peek(bytes);
    const taken = joined.subarray(0, bytes);
    const rest = joined.subarray(bytes);
    if (rest.length === 0) this.#chunks = [];
    else this.#chunks[0] = rest;
    this.#buffered -= bytes;
    return taken;
  }
}
