/**
 * The built-in compressors, from node:zlib: `deflate` (raw DEFLATE level 1, id 0: what every Callisto
 * peer has spoken since protocol v1, so an older peer's compressed frames are read as deflate), `gzip`
 * (level 1, id 1) and `brotli` (quality 4, id 2). Each inflates with `maxOutputLength`, so a bomb stops
 * at the bound instead of being inflated whole.
 *
 * zstd is not built in: Node 20 has none in node:zlib (it arrived experimentally in 22.15/23.8). Its id
 * 3 is kept for it; register one from a package as an extension (docs/extending.md#compressors).
 */
import zlib from 'node:zlib';
import { type Compressor, InflateBoundError } from './compressor.js';

function bounded(inflate: () => Buffer, maxBytes: number, name: string): Buffer {
  try {
    return inflate();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new InflateBoundError(`${name} body inflates past ${maxBytes} bytes`);
    }
    throw error;
  }
}

export const deflateCompressor: Compressor = Object.freeze({
  name: 'deflate',
  id: 0,
  compress: (body: Uint8Array) => zlib.deflateRawSync(body, { level: 1 }),
  decompress: (body: Uint8Array, maxBytes: number) =>
    bounded(() => zlib.inflateRawSync(body, { maxOutputLength: maxBytes }), maxBytes, 'deflate'),
});

export const gzipCompressor: Compressor = Object.freeze({
  name: 'gzip',
  id: 1,
  compress: (body: Uint8Array) => zlib.gzipSync(body, { level: 1 }),
  decompress: (body: Uint8Array, maxBytes: number) =>
    bounded(() => zlib.gunzipSync(body, { maxOutputLength: maxBytes }), maxBytes, 'gzip'),
});

export const brotliCompressor: Compressor = Object.freeze({
  name: 'brotli',
  id: 2,
  compress: (body: Uint8Array) =>
    zlib.brotliCompressSync(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  decompress: (body: Uint8Array, maxBytes: number) =>
    bounded(() => zlib.brotliDecompressSync(body, { maxOutputLength: maxBytes }), maxBytes, 'brotli'),
});

/** The built-in compressors by name (the `compressor` extensions every app starts with). */
export const BUILTIN_COMPRESSORS: Readonly<Record<string, Compressor>> = Object.freeze({
  deflate: deflateCompressor,
  gzip: gzipCompressor,
  brotli: brotliCompressor,
});

/** The compressor a consumer uses unless configured otherwise. */
export const DEFAULT_COMPRESSOR = 'deflate';
