import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { promisify } from 'node:util';

/**
 * Pure encoding: parameters per file, buffer → buffer, and streaming encoders for big files.
 */

const { constants: Z } = zlib;
const MODES = { text: Z.BROTLI_MODE_TEXT, font: Z.BROTLI_MODE_FONT, generic: Z.BROTLI_MODE_GENERIC };

/** Smallest Brotli window (10..24 bits) that covers `size` bytes: same output as a larger one, less memory. */
export function brotliWindowBits(size) {
  let bits = 10;
  while (bits < 24 && 2 ** bits - 16 < size) bits++;
  return bits;
}

/**
 * zlib options for one file.
 * @param {'br' | 'gzip'} encoding
 * @param {{ size: number, mode: 'text' | 'font' | 'generic', brotliQuality: number, gzipLevel: number }} p
 */
export function zlibOptions(encoding, p) {
  // One output chunk per ~file (capped) keeps the main-thread/pool round trips per file low.
  const chunkSize = Math.min(Math.max(16 * 1024, p.size), 1024 * 1024);
  if (encoding === 'br') {
    return {
      chunkSize,
      params: {
        [Z.BROTLI_PARAM_QUALITY]: p.brotliQuality,
        [Z.BROTLI_PARAM_MODE]: MODES[p.mode],
        [Z.BROTLI_PARAM_LGWIN]: brotliWindowBits(p.size),
        [Z.BROTLI_PARAM_SIZE_HINT]: Math.min(p.size, 2 ** 31 - 1),
      },
    };
  }
  if (encoding === 'gzip') return { chunkSize, level: p.gzipLevel, memLevel: 9 };
  throw new Error(`Unknown encoding ${encoding}`);
}

const brotliAsync = promisify(zlib.brotliCompress);
const gzipAsync = promisify(zlib.gzip);

/**
 * Compress a buffer off the main thread (libuv pool).
 * @param {Buffer} buf
 * @param {'br' | 'gzip'} encoding
 * @param {object} options from zlibOptions()
 * @returns {Promise<Buffer>}
 */
export function encodeBuffer(buf, encoding, options) {
  return encoding === 'br' ? brotliAsync(buf, options) : gzipAsync(buf, options);
}

/** Synchronous twin of encodeBuffer (for workers and the benchmark's lower bound). */
export function encodeBufferSync(buf, encoding, options) {
  return encoding === 'br' ? zlib.brotliCompressSync(buf, options) : zlib.gzipSync(buf, options);
}

/** A streaming encoder (Transform) for files too big to hold in memory. */
export function createEncoder(encoding, options) {
  return encoding === 'br' ? zlib.createBrotliCompress(options) : zlib.createGzip(options);
}

/** Decode a whole buffer of `encoding` (for verification and tests). */
export function decodeBufferSync(buf, encoding) {
  return encoding === 'br' ? zlib.brotliDecompressSync(buf) : zlib.gunzipSync(buf);
}

/** Content hash as recorded in the manifest: `sha256-<base64url>`. */
export function contentHash(buf) {
  return 'sha256-' + crypto.createHash('sha256').update(buf).digest('base64url');
}

/** An incremental hasher that ends in the same format as contentHash(). */
export function createHasher() {
  const h = crypto.createHash('sha256');
  return { update: (chunk) => h.update(chunk), digest: () => 'sha256-' + h.digest('base64url') };
}
