export { type Compressor, InflateBoundError, MAX_COMPRESSOR_ID, MIN_COMPRESSOR_ID } from './compressor.js';
export {
  BUILTIN_COMPRESSOR_TABLE,
  type CompressorTable,
  createCompressorTable,
} from './compressor-table.js';
export {
  BUILTIN_COMPRESSORS,
  brotliCompressor,
  DEFAULT_COMPRESSOR,
  deflateCompressor,
  gzipCompressor,
} from './zlib-compressors.js';
