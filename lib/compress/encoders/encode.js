import { brotliCodec, brotliDeltaCodec } from './brotli.js';
import { gzipCodec } from './gzip.js';
import { zstdCodec, zstdDeltaCodec } from './zstd.js';

/**
 * The compressor's half of the encoding registry: each encoding's codec (codec.js), and encoding by
 * name. WebAssembly encoders run on the calling thread and must be loaded there first (loadEncoder()).
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
 * @param {string} encoding
 */
export function codecOf(encoding) {
  const c = CODECS[/** @type {Encoding} */ (encoding)];
  if (c === undefined) throw new Error(`Unknown encoding ${encoding}`);
  return c;
}

/**
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
 * Load, in this thread, the WebAssembly encoder that encodeBufferSync() needs (none for zlib).
 * @param {Encoding} encoding
 * @param {any} [options] from zlibOptions()
 */
export function loadEncoder(encoding, options = {}) {
  return codecOf(encoding).load(options);
}

/**
 * Throw ERR_PRECOMPRESSOR_ENCODING before any work when the options ask for an encoder not installed.
 * @param {{ encodings: readonly string[], zopfli: boolean }} opts
 */
export function checkEncoders(opts) {
  for (const e of opts.encodings) codecOf(e).check(opts);
}

/**
 * encodeBuffer for workers and the benchmark's lower bound (WebAssembly loaded first: loadEncoder()).
 * @param {Buffer} buf
 * @param {Encoding} encoding
 * @param {any} options from zlibOptions()
 * @returns {Buffer}
 */
export function encodeBufferSync(buf, encoding, options) {
  return codecOf(encoding).encodeSync(buf, options);
}

/**
 * Can `encoding` with `options` encode a file without holding it in memory (zlib only)?
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
 * Decode a buffer of `encoding`, refusing (RangeError) more than `maxOutputLength` bytes (except the
 * WebAssembly zstd, which cannot bound its output).
 * @param {Buffer} buf
 * @param {Encoding} encoding
 * @param {number} [maxOutputLength]
 */
export function decodeBufferSync(buf, encoding, maxOutputLength) {
  // A chunk of the bound's size (at least zlib's minimum): not zlib's 16 KiB per call for a small file.
  const opts = maxOutputLength === undefined
    ? {}
    : { maxOutputLength, chunkSize: Math.min(Math.max(maxOutputLength, 64), 1024 * 1024) };
  return codecOf(encoding).decodeSync(buf, opts);
}
