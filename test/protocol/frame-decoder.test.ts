import { describe, expect, it } from 'vitest';
import { type Frame, FrameKind, HEADER_BYTES } from '../../src/protocol/frame.js';
import { createFrameDecoder } from '../../src/protocol/frame-decoder.js';
import { createFrameWriter } from '../../src/protocol/frame-writer.js';
import { decodeRequestMeta, encodeRoutePrefix } from '../../src/protocol/metadata.js';
import { ProtocolError } from '../../src/protocol/protocol-error.js';

/** Encodes frames through the real writer and returns the bytes it would send. */
function encode(write: (writer: ReturnType<typeof createFrameWriter>) => void): Buffer {
  const batches: Buffer[] = [];
  const writer = createFrameWriter({ write: (batch) => batches.push(batch), pendingBytes: 0 });
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

function collector(options?: { maxFrameBytes: number }) {
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
      writer.request(i, 0, 2, prefix, 1000, { trace: `t${i}` }, Buffer.alloc(bodySize, i % 256));
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
});
