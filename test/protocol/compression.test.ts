import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_INFLATE_RATIO,
  decompress as decompressWith,
  type InflateLimits,
  maybeCompress as maybeCompressWith,
} from '../../src/protocol/compression.js';
import { ProtocolError } from '../../src/protocol/protocol-error.js';
import { brotliCompressor, deflateCompressor } from '../../src/serialization/compression/index.js';

/** The deflate compressor (id 0), what these tests were written for. */
const maybeCompress = (body: Uint8Array, threshold: number) =>
  maybeCompressWith(body, threshold, deflateCompressor) as Buffer | undefined;
const decompress = (body: Buffer, limits: InflateLimits) => decompressWith(body, 0, limits);

const on = { enabled: true, maxBytes: 8 * 1024 * 1024, maxRatio: DEFAULT_MAX_INFLATE_RATIO };

describe('compression', () => {
  it('round-trips what it compresses and leaves small or incompressible bodies alone', () => {
    const text = Buffer.from('abc'.repeat(10_000));
    const compressed = maybeCompress(text, 1024)!;
    expect(compressed.length).toBeLessThan(text.length);
    expect(decompress(compressed, on)).toEqual(text);
    expect(maybeCompress(Buffer.alloc(100), 1024)).toBeUndefined();
    expect(maybeCompress(text, 0)).toBeUndefined();
  });

  it('stays under the default ratio for anything it sends itself (DEFLATE level 1)', () => {
    const worst = Buffer.alloc(8 * 1024 * 1024 - 100);
    const compressed = maybeCompress(worst, 1024)!;
    expect(worst.length / compressed.length).toBeLessThan(DEFAULT_MAX_INFLATE_RATIO);
    expect(decompress(compressed, on).length).toBe(worst.length);
  });

  it('refuses compressed bodies where compression is off', () => {
    const compressed = maybeCompress(Buffer.alloc(10_000), 1024)!;
    expect(() => decompress(compressed, { ...on, enabled: false })).toThrow(/compression is off/);
  });

  it('refuses to inflate past maxInflateRatio times the compressed size', () => {
    const bomb = zlib.deflateRawSync(Buffer.alloc(4 * 1024 * 1024), { level: 9 }); // ~1000:1
    expect(() => decompress(bomb, on)).toThrow(ProtocolError);
    expect(() => decompress(bomb, on)).toThrow(/256 times its \d+ bytes \(maxInflateRatio\)/);
    expect(decompress(bomb, { ...on, maxRatio: 2000 }).length).toBe(4 * 1024 * 1024);
  });

  it('refuses to inflate past the maximum frame size', () => {
    const compressed = zlib.deflateRawSync(Buffer.alloc(2 * 1024 * 1024), { level: 1 });
    expect(() => decompress(compressed, { ...on, maxBytes: 1024 * 1024 })).toThrow(/maximum frame size/);
  });

  it('refuses garbage', () => {
    expect(() => decompress(Buffer.from([0xff, 0xff, 0xff]), on)).toThrow(/cannot inflate/);
  });

  it('sends a body uncompressed rather than past its own maxInflateRatio (brotli on zeros)', () => {
    const zeros = Buffer.alloc(1024 * 1024);
    expect(maybeCompressWith(zeros, 1024, brotliCompressor)).toBeUndefined();
    expect(maybeCompressWith(zeros, 1024, brotliCompressor, 1_000_000)).toBeDefined();
  });

  it('refuses a body in a compressor this side does not have, naming its id', () => {
    expect(() => decompressWith(Buffer.from([1, 2, 3]), 42, on)).toThrow(/compressor id 42/);
  });
});
