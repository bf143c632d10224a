import { brotliCodec, brotliDeltaCodec } from './brotli.js';
import { gzipCodec } from './gzip.js';
import { zstdCodec, zstdDeltaCodec } from './zstd.js';

/**
 * The compressor's half of the encoding registry (lib/encodings.js): the codec of each encoding
 * (lib/compress/encoders/codec.js says what one is), and encoding by name through it. A new encoding is an
 * entry there and a codec here; nothing else names it. The WebAssembly encoders (zopfli; zstd
 * before Node 22.15) hold the whole file, run on the thread that calls them and must be loaded
 * there first with loadEncoder().
 */

export { FONT_TRIAL_MAX, brotliWindowBits } from './brotli.js';

/**
 * @typedef {import('./codec.js').EncodeParams} EncodeParams
 * @typedef {import('../../encodings.js').Encoding} Encoding
 * @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding
 */

/** The codec of each variant encoding. @type {Readonly<Record<Encoding, import('./codec.js').Codec>>} */
const CODECS = Object.freeze({ br: brotliCodec, zstd: zstdCodec, gzip: gzipCodec });
/** The codec of each delta encoding. @type {Readonly<Record<DeltaEncoding, import('./codec.js').DeltaCodec>>} */
const DELTA_CODECS = Object.freeze({ dcb: brotliDeltaCodec, dcz: zstdDeltaCodec });

/**
 * The codec of a variant encoding.
 * @param {string} encoding
 */
export function codecOf(encoding) {
  const c = CODECS[/** @type {Encoding} */ (encoding)];
  if (c === undefined) throw new Error(`Unknown encoding ${encoding}`);
  return c;
}

/**
 * The codec of a delta encoding.
 * @param {DeltaEncoding} encoding
 */
export function deltaCodecOf(encoding) {
  return DELTA_CODECS[encoding];
}

/**
 * Encoder options for one file (zlib options for br and gzip, plus `zstdLevel` for zstd; see each codec).
 * @param {Encoding} encoding
 * @param {EncodeParams} p
 * @returns {any}
 */
export function zlibOptions(encoding, p) {
  return codecOf(encoding).options(p);
}

/**
 * Compress a buffer: zlib off the main thread (libuv pool); the WebAssembly encoders are loaded
 * if needed, then run on this thread.
 * @param {Buffer} buf
 * @param {Encoding} encoding
 * @param {any} options from zlibOptions()
 * @returns {Promise<Buffer>}
 */
export function encodeBuffer(buf, encoding, options) {
  return codecOf(encoding).encode(buf, options);
}

/**
 * Load, in this thread, the WebAssembly encoder that encodeBufferSync() needs for `encoding`
 * with `options` (nothing to do for zlib). Rejects with ERR_PRECOMPRESSOR_ENCODING when its
 * package is not installed.
 * @param {Encoding} encoding
 * @param {any} [options] from zlibOptions()
 */
export function loadEncoder(encoding, options = {}) {
  return codecOf(encoding).load(options);
}

/**
 * Throw ERR_PRECOMPRESSOR_ENCODING, once and before any work, when the options ask for an
 * encoder this installation does not have (zstd on an old Node without its package; zopfli
 * without its package).
 * @param {{ encodings: readonly string[], zopfli: boolean }} opts
 */
export function checkEncoders(opts) {
  for (const e of opts.encodings) codecOf(e).check(opts);
}

/**
 * Synchronous twin of encodeBuffer (for workers and the benchmark's lower bound). The
 * WebAssembly encoders must have been loaded in this thread with loadEncoder() first.
 * @param {Buffer} buf
 * @param {Encoding} encoding
 * @param {any} options from zlibOptions()
 * @returns {Buffer}
 */
export function encodeBufferSync(buf, encoding, options) {
  return codecOf(encoding).encodeSync(buf, options);
}

/**
 * Can `encoding` with `options` stream (encode a file without holding it in memory)? Only the
 * zlib encoders can: zopfli and WebAssembly zstd need the whole file.
 * @param {Encoding} encoding
 * @param {any} options from zlibOptions()
 */
export function canStream(encoding, options) {
  return codecOf(encoding).canStream(options);
}

/**
 * A streaming encoder (Transform) for files too big to hold in memory (see canStream()).
 * @param {string} encoding
 * @param {any} options from zlibOptions()
 */
export function createEncoder(encoding, options) {
  return codecOf(encoding).createEncoder(options);
}

/**
 * Decode a whole buffer of `encoding` (for verification and tests), refusing (RangeError) to
 * produce more than `maxOutputLength` bytes. zstd without Node's zlib zstd needs the WebAssembly
 * decoder loaded in this thread (loadEncoder('zstd')), which cannot bound its output.
 * @param {Buffer} buf
 * @param {Encoding} encoding
 * @param {number} [maxOutputLength]
 */
export function decodeBufferSync(buf, encoding, maxOutputLength) {
  // An output chunk of the bound's size (zlib's default is 16 KiB, a new buffer per call that a
  // small file's decode does not need; the chunk is at least zlib's minimum, 64 bytes).
  const opts = maxOutputLength === undefined
    ? {}
    : { maxOutputLength, chunkSize: Math.min(Math.max(maxOutputLength, 64), 1024 * 1024) };
  return codecOf(encoding).decodeSync(buf, opts);
}
