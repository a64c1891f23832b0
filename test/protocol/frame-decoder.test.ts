import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createByteBudget } from '../../src/protocol/byte-budget.js';
import { type Frame, FrameKind, HEADER_BYTES } from '../../src/protocol/frame.js';
import { createFrameDecoder, SMALL_PIECE_BYTES } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter } from '../../src/protocol/frame-writer.js';
import { decodeRequestMeta, encodeRoutePrefix } from '../../src/protocol/metadata.js';
import { ProtocolError } from '../../src/protocol/protocol-error.js';

/** Encodes frames through the real writer and returns the bytes it would send. */
function encode(write: (writer: ReturnType<typeof createFrameWriter>) => void): Buffer {
  const batches: Buffer[] = [];
  const writer = createFrameWriter({
    write: (batch) => batches.push(batch),
    writeWithBody: (batch, body) => batches.push(batch, body),
    pendingBytes: 0,
  });
  write(writer);
  writer.flush();
  return Buffer.concat(batches);
}

interface Seen {
  kind: number;
  requestId: number;
  serializer: number;
  status: number;
  meta: Buffer;
  body: Buffer;
}

function collector(options?: Parameters<typeof createFrameDecoder>[1]) {
  const seen: Seen[] = [];
  const decoder = createFrameDecoder(
    (frame: Frame) =>
      seen.push({
        kind: frame.kind,
        requestId: frame.requestId,
        serializer: frame.serializer,
        status: frame.status,
        meta: Buffer.from(frame.meta),
        body: Buffer.from(frame.body),
      }),
    options,
  );
  return { seen, decoder };
}

const prefix = encodeRoutePrefix('demo.Echo', '1.0.0', '', 'say');

function requests(count: number, bodySize = 10): Buffer {
  return encode((writer) => {
    for (let i = 1; i <= count; i++) {
      writer.request({
        requestId: i,
        flags: 0,
        serializer: 2,
        routePrefix: prefix,
        timeoutMs: 1000,
        attachments: { trace: `t${i}` },
        body: Buffer.alloc(bodySize, i % 256),
      });
    }
  });
}

describe('frame decoder', () => {
  it('decodes frames delivered one byte at a time', () => {
    const bytes = requests(3, 40);
    const { seen, decoder } = collector();
    for (let i = 0; i < bytes.length; i++) decoder.push(bytes.subarray(i, i + 1));
    expect(seen.map((f) => f.requestId)).toEqual([1, 2, 3]);
    const meta = decodeRequestMeta(seen[1]!.meta);
    expect(meta).toMatchObject({ service: 'demo.Echo', version: '1.0.0', method: 'say', timeoutMs: 1000 });
    expect(meta.attachments).toEqual({ trace: 't2' });
    expect(seen[2]!.body).toEqual(Buffer.alloc(40, 3));
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('decodes dozens of frames in one chunk', () => {
    const { seen, decoder } = collector();
    decoder.push(requests(50));
    expect(seen).toHaveLength(50);
    expect(seen.every((f) => f.kind === FrameKind.Request)).toBe(true);
  });

  it('decodes frames split at every possible boundary', () => {
    const bytes = requests(4, 7);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { seen, decoder } = collector();
      decoder.push(bytes.subarray(0, cut));
      decoder.push(bytes.subarray(cut));
      expect(seen.map((f) => f.requestId)).toEqual([1, 2, 3, 4]);
    }
  });

  it('assembles a large frame spread over many chunks', () => {
    const bytes = requests(1, 300_000);
    const { seen, decoder } = collector();
    for (let at = 0; at < bytes.length; at += 65_536) decoder.push(bytes.subarray(at, at + 65_536));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.length).toBe(300_000);
  });

  it('rejects a wrong magic with a clear error', () => {
    const bytes = requests(1);
    bytes[0] = 0x47; // 'G', as in an HTTP GET
    const { decoder } = collector();
    expect(() => decoder.push(bytes)).toThrow(ProtocolError);
    expect(() => collector().decoder.push(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toThrow(
      /bad magic/,
    );
  });

  it('rejects an unknown protocol version', () => {
    const bytes = requests(1);
    bytes[2] = 9;
    expect(() => collector().decoder.push(bytes)).toThrow(/unsupported protocol version 9/);
  });

  it('rejects an oversized frame from its header, before buffering the body', () => {
    const header = requests(1, 0).subarray(0, HEADER_BYTES);
    header.writeUInt32BE(100 * 1024 * 1024, 16); // claims a 100 MiB body
    const { decoder } = collector({ maxFrameBytes: 1024 * 1024 });
    expect(() => decoder.push(header)).toThrow(/exceeds the maximum frame size of 1048576/);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('rejects truncated request metadata', () => {
    expect(() => decodeRequestMeta(Buffer.from([0, 5, 65]))).toThrow(/truncated metadata/);
  });

  it('counts the frames it decoded', () => {
    const { decoder } = collector();
    decoder.push(requests(3));
    expect(decoder.frames).toBe(3);
  });
});

describe('frame decoder memory', () => {
  /** The start of a request frame claiming `bodyLength` bytes of body, with `have` bytes of it. */
  function start(bodyLength: number, have: number): Buffer {
    const header = requests(1, 0).subarray(0, HEADER_BYTES);
    header.writeUInt32BE(0, 12);
    header.writeUInt32BE(bodyLength, 16);
    return Buffer.concat([header, Buffer.alloc(have, 7)]);
  }

  it('holds what arrived, not what the header claims', () => {
    const budget = createByteBudget(1024 * 1024 * 1024);
    const { decoder } = collector({ budget, allowanceBytes: 0 });
    decoder.push(start(8 * 1024 * 1024 - 100, 30));
    expect(decoder.bufferedBytes).toBe(HEADER_BYTES + 30);
    expect(budget.used).toBe(HEADER_BYTES + 30);
    decoder.push(Buffer.alloc(100_000));
    // exactly what arrived
    expect(budget.used).toBe(HEADER_BYTES + 30 + 100_000);
    expect(decoder.bufferedBytes).toBe(HEADER_BYTES + 30 + 100_000);
  });

  it('assembles a frame from many chunks, a byte at a time included, into the same bytes', () => {
    const body = Buffer.alloc(300_000);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    const wire = encode((w) => {
      w.response({ requestId: 9, serializer: 2, status: 0, body });
      w.response({ requestId: 10, serializer: 2, status: 0, body: body.subarray(0, 5_000) });
    });
    // chunks of every size class: single bytes, small pieces copied together, whole large chunks
    const sizes = [1, 1, 3, 17, SMALL_PIECE_BYTES - 1, SMALL_PIECE_BYTES, 65_536, 1, 100_000];
    const { seen, decoder } = collector();
    let offset = 0;
    for (let i = 0; offset < wire.length; i++) {
      const size = sizes[i % sizes.length]!;
      decoder.push(Buffer.from(wire.subarray(offset, offset + size)));
      offset += size;
    }
    expect(seen.map((frame) => frame.requestId)).toEqual([9, 10]);
    expect(seen[0]!.body.equals(body)).toBe(true);
    expect(seen[1]!.body.equals(body.subarray(0, 5_000))).toBe(true);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it('gives the budget back when the frame completes, fails, or the decoder is disposed', () => {
    const budget = createByteBudget(64 * 1024 * 1024);
    const { seen, decoder } = collector({ budget, allowanceBytes: 0 });
    decoder.push(start(200_000, 10));
    decoder.push(Buffer.alloc(200_000 - 10));
    expect(seen).toHaveLength(1);
    expect(budget.used).toBe(0);
    decoder.push(start(200_000, 10));
    expect(budget.used).toBeGreaterThan(0);
    decoder.dispose();
    expect(budget.used).toBe(0);
    // a decoder that holds some of the budget and then fails gives it back
    const small = createByteBudget(256 * 1024);
    const holder = collector({ budget: small, allowanceBytes: 0 }).decoder;
    holder.push(start(1024 * 1024, 100 * 1024));
    const held = small.used;
    const failing = collector({ budget: small, allowanceBytes: 0 }).decoder;
    failing.push(start(1024 * 1024, 10 * 1024));
    expect(small.used).toBeGreaterThan(held);
    expect(() => failing.push(Buffer.alloc(200 * 1024))).toThrow(/maxPartialFrameBytes/);
    expect(small.used).toBe(held);
    holder.dispose();
    expect(small.used).toBe(0);
  });

  it('refuses to grow a partial frame past a spent budget, naming the key', () => {
    const budget = createByteBudget(256 * 1024);
    const first = collector({ budget, allowanceBytes: 0 }).decoder;
    first.push(start(1024 * 1024, 200 * 1024)); // holds 200 KiB of the 256
    const second = collector({ budget, allowanceBytes: 0 }).decoder;
    expect(() => second.push(start(1024 * 1024, 100 * 1024))).toThrow(/maxPartialFrameBytes/);
    expect(() => second.push(Buffer.alloc(1))).toThrow(ProtocolError);
    first.dispose();
    expect(budget.used).toBe(0);
  });

  it('holds up to the allowance without touching the budget', () => {
    const budget = createByteBudget(1);
    const { decoder } = collector({ budget, allowanceBytes: 16 * 1024 });
    decoder.push(start(100_000, 4_000));
    expect(budget.used).toBe(0);
    expect(() => decoder.push(Buffer.alloc(20_000))).toThrow(/maxPartialFrameBytes/);
  });

  it('decodes any split of any frames identically while growing buffers (fuzz)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 70_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 40_000 }), { minLength: 1, maxLength: 40 }),
        (sizes, cuts) => {
          const bytes = encode((writer) => {
            for (const [i, size] of sizes.entries()) {
              writer.request({
                requestId: i + 1,
                flags: 0,
                serializer: 2,
                routePrefix: prefix,
                timeoutMs: 0,
                attachments: undefined,
                body: Buffer.alloc(size, i),
              });
            }
          });
          const budget = createByteBudget(64 * 1024 * 1024);
          const { seen, decoder } = collector({ budget, allowanceBytes: 1024 });
          let at = 0;
          for (let i = 0; at < bytes.length; i++) {
            const next = Math.min(bytes.length, at + cuts[i % cuts.length]!);
            decoder.push(bytes.subarray(at, next));
            at = next;
          }
          expect(seen.map((f) => f.body.length)).toEqual(sizes);
          expect(seen.every((f, i) => f.body.every((b) => b === (i & 0xff)))).toBe(true);
          expect(budget.used).toBe(0);
          expect(decoder.bufferedBytes).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
