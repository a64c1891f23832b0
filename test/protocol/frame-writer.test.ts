/**
 * The frame writer's batches: small frames of one tick go out in one write; a request or response with
 * a large body goes out as the batch ending with its header, then the body itself, not copied, both
 * in one write of the sink; any
 * other large frame that does not fit the batch gets a buffer of its own holding what was batched
 * before it and itself (one allocation, one copy); what follows in the same tick goes in a batch after
 * it, in order; a batch that reaches EARLY_FLUSH_BYTES is written at once, before the tick ends.
 */
import { describe, expect, it } from 'vitest';
import { type Frame, HEADER_BYTES } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter, EARLY_FLUSH_BYTES, LARGE_FRAME_BYTES } from '../../src/protocol/frame-writer.js';

function writerWithBatches() {
  const batches: Buffer[] = [];
  /** How many buffers each call of the sink's `write` handed over (2: a batch and a lent body). */
  const buffersPerWrite: number[] = [];
  const writer = createFrameWriter({
    write: (batch) => {
      batches.push(batch);
      buffersPerWrite.push(1);
    },
    writeWithBody: (batch, body) => {
      batches.push(batch, body);
      buffersPerWrite.push(2);
    },
    pendingBytes: 0,
  });
  return { writer, batches, buffersPerWrite };
}

function decodeAll(batches: Buffer[]): Array<{ requestId: number; body: Buffer }> {
  const frames: Array<{ requestId: number; body: Buffer }> = [];
  const decoder = createFrameDecoder((frame: Frame) =>
    frames.push({ requestId: frame.requestId, body: Buffer.from(frame.body) }),
  );
  for (const batch of batches) decoder.push(batch);
  return frames;
}

describe('frame writer', () => {
  it('writes the small frames of one tick in one batch', () => {
    const { writer, batches } = writerWithBatches();
    for (let id = 1; id <= 10; id++) {
      writer.response({ requestId: id, serializer: 2, status: 0, body: Buffer.alloc(100, id) });
    }
    writer.flush();
    expect(batches).toHaveLength(1);
    expect(decodeAll(batches).map((frame) => frame.requestId)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('writes a batch as soon as it holds EARLY_FLUSH_BYTES, without waiting for the end of the tick', () => {
    const { writer, batches } = writerWithBatches();
    const frameBytes = HEADER_BYTES + 100;
    const perBatch = Math.ceil(EARLY_FLUSH_BYTES / frameBytes);
    const frames = perBatch * 3 + 5;
    for (let id = 1; id <= frames; id++) {
      writer.response({ requestId: id, serializer: 2, status: 0, body: Buffer.alloc(100, id % 256) });
    }
    // three full batches are out already, in this tick; the rest waits for the flush
    expect(batches.map((batch) => batch.length)).toEqual([1, 2, 3].map(() => perBatch * frameBytes));
    writer.flush();
    expect(batches).toHaveLength(4);
    const decoded = decodeAll(batches);
    expect(decoded.map((frame) => frame.requestId)).toEqual(Array.from({ length: frames }, (_, i) => i + 1));
    expect(decoded.every((frame) => frame.body.every((byte) => byte === frame.requestId % 256))).toBe(true);
  });

  it('sends a large response or request body as it is, right after its header, in order', () => {
    const { writer, batches, buffersPerWrite } = writerWithBatches();
    const large = Buffer.alloc(LARGE_FRAME_BYTES * 16, 9);
    const request = Buffer.alloc(LARGE_FRAME_BYTES + 1, 7);
    writer.response({ requestId: 1, serializer: 2, status: 0, body: Buffer.alloc(100, 1) });
    writer.response({ requestId: 2, serializer: 2, status: 0, body: large });
    writer.request({
      requestId: 3,
      flags: 0,
      serializer: 2,
      routePrefix: Buffer.from([0, 1, 0x61, 0, 0, 0, 0, 0, 1, 0x6d]),
      timeoutMs: 0,
      attachments: undefined,
      body: request,
    });
    writer.response({ requestId: 4, serializer: 2, status: 0, body: Buffer.alloc(100, 4) });
    writer.flush();
    // the small frame and the large one's header; the large body itself; the request's header; its
    // body; the last frame
    expect(batches).toHaveLength(5);
    expect(batches[1]).toBe(large);
    expect(batches[3]).toBe(request);
    // each lent body goes to the sink in the same write as the batch ending with its header (one
    // writev on a socket), not in a write of its own
    expect(buffersPerWrite).toEqual([2, 2, 1]);
    const frames = decodeAll(batches);
    expect(frames.map((frame) => frame.requestId)).toEqual([1, 2, 3, 4]);
    expect(frames[1]!.body.equals(large)).toBe(true);
    expect(frames[2]!.body.equals(request)).toBe(true);
    expect(frames[3]!.body.equals(Buffer.alloc(100, 4))).toBe(true);
  });

  it('gives any other large frame a buffer of its own, exactly its size with what came before it, in order', () => {
    const { writer, batches } = writerWithBatches();
    const large = Buffer.alloc(LARGE_FRAME_BYTES * 16, 9);
    writer.response({ requestId: 1, serializer: 2, status: 0, body: Buffer.alloc(100, 1) });
    writer.streamMessage(2, 2, large);
    writer.response({ requestId: 3, serializer: 2, status: 0, body: Buffer.alloc(100, 3) });
    writer.flush();
    expect(batches).toHaveLength(2);
    // the first write is the small frame and the large one, in a buffer of exactly their size
    const first = batches[0]!;
    expect(first.length).toBe(2 * HEADER_BYTES + 100 + large.length);
    expect(first.buffer.byteLength).toBe(first.length);
    const frames = decodeAll(batches);
    expect(frames.map((frame) => frame.requestId)).toEqual([1, 2, 3]);
    expect(frames[1]!.body.equals(large)).toBe(true);
    expect(frames[2]!.body.equals(Buffer.alloc(100, 3))).toBe(true);
  });

  it('copies a stream message’s body into its frame', () => {
    const { writer, batches } = writerWithBatches();
    const body = Buffer.alloc(LARGE_FRAME_BYTES * 2, 5);
    writer.streamMessage(1, 2, body);
    body.fill(0);
    writer.flush();
    expect(decodeAll(batches)[0]!.body.equals(Buffer.alloc(LARGE_FRAME_BYTES * 2, 5))).toBe(true);
  });
});
