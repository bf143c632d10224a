import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { PrecompressorError } from '../errors.js';
import { createRequire } from 'node:module';
import { assertHttpZstd, loadWasmZstd, nodeHasZstd, nodeZstdOptions, zstdBackend } from './zstd.js';

/**
 * Pure encoding: parameters per file, buffer → buffer, and streaming encoders for big files.
 * br and gzip are Node's zlib; zstd is Node's zlib where it exists (>= 22.15), else WebAssembly;
 * gzip with `zopfli` is zopfli in WebAssembly. The WebAssembly encoders hold the whole file in
 * memory (they cannot stream), run synchronously on the thread that calls them (the workers of
 * lib/compress/pool.js in precompress()) and must be loaded there first with loadEncoder().
 */

/** zopfli's own default: more iterations cost time and gain less than 0.1 %. */
const ZOPFLI_ITERATIONS = 15;
const ZOPFLI_PACKAGE = '@gfx/zopfli';

const { constants: Z } = zlib;
const MODES = { text: Z.BROTLI_MODE_TEXT, font: Z.BROTLI_MODE_FONT, generic: Z.BROTLI_MODE_GENERIC };

/**
 * Font mode is only a hint, and it loses on some fonts (icon fonts), so a font is compressed both
 * in font and in generic mode and the smaller kept; above this size only in generic mode, where
 * the trial doubles a long job for nothing measurable (docs/benchmarks.md, "Figures behind design constants").
 */
export const FONT_TRIAL_MAX = 256 * 1024;

/**
 * Brotli window (16..24 bits) for a file of `size` bytes: the smallest that covers it, but not
 * below 16 bits, since windows of 10-15 bits cost 7 header bits against 1.
 * @param {number} size
 */
export function brotliWindowBits(size) {
  let bits = 16;
  while (bits < 24 && 2 ** bits - 16 < size) bits++;
  return bits;
}

/**
 * @typedef {{ size: number, mode: 'text' | 'font' | 'generic', brotliQuality: number, gzipLevel: number,
 *   zstdLevel?: number, zopfli?: boolean }} EncodeParams
 */

/**
 * Encoder options for one file (zlib options for br and gzip; for zstd, zlib options plus
 * `zstdLevel`; for gzip by zopfli, `{ zopfli: true, iterations, gzip }` where `gzip` are the zlib
 * options of the plain gzip that is kept instead when zopfli is not smaller).
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {EncodeParams} p
 * @returns {any}
 */
export function zlibOptions(encoding, p) {
  if (encoding === 'zstd') {
    return { zstdLevel: p.zstdLevel ?? 19, ...nodeZstdOptions({ size: p.size, zstdLevel: p.zstdLevel ?? 19 }) };
  }
  if (encoding === 'gzip' && p.zopfli) {
    return { zopfli: true, iterations: ZOPFLI_ITERATIONS, gzip: zlibOptions('gzip', { ...p, zopfli: false }) };
  }
  // One output chunk per ~file (capped) keeps the main-thread/pool round trips per file low.
  const chunkSize = Math.min(Math.max(16 * 1024, p.size), 1024 * 1024);
  if (encoding === 'br') {
    const mode = p.mode === 'font' && p.size > FONT_TRIAL_MAX ? 'generic' : p.mode;
    return {
      chunkSize,
      params: {
        [Z.BROTLI_PARAM_QUALITY]: p.brotliQuality,
        [Z.BROTLI_PARAM_MODE]: MODES[mode],
        [Z.BROTLI_PARAM_LGWIN]: brotliWindowBits(p.size),
        [Z.BROTLI_PARAM_SIZE_HINT]: Math.min(p.size, 2 ** 31 - 1),
      },
    };
  }
  if (encoding === 'gzip') return { chunkSize, level: p.gzipLevel };
  throw new Error(`Unknown encoding ${encoding}`);
}

const Zx = /** @type {any} */ (zlib);
const brotliAsync = promisify(zlib.brotliCompress);
const gzipAsync = promisify(zlib.gzip);
const zstdAsync = nodeHasZstd ? promisify(Zx.zstdCompress) : null;

/**
 * Compress a buffer: zlib off the main thread (libuv pool); the WebAssembly encoders are loaded
 * if needed, then run on this thread. Every zstd output is checked to need a window of at most 8 MB.
 * @param {Buffer} buf
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {any} options from zlibOptions()
 * @returns {Promise<Buffer>}
 */
export async function encodeBuffer(buf, encoding, options) {
  if (encoding === 'br') return brotliAsync(buf, options);
  if (encoding === 'gzip') {
    if (!options.zopfli) return gzipAsync(buf, options);
  } else if (zstdAsync) {
    const out = await zstdAsync(buf, options);
    assertHttpZstd(out);
    return out;
  }
  await loadEncoder(encoding, options);
  return encodeBufferSync(buf, encoding, options);
}

/** @type {{ zstd: any, zopfli: any }} WebAssembly encoders loaded in this thread */
const loaded = { zstd: null, zopfli: null };

/**
 * Load, in this thread, the WebAssembly encoder that encodeBufferSync() needs for `encoding`
 * with `options` (nothing to do for zlib). Rejects with ERR_PRECOMPRESSOR_ENCODING when its
 * package is not installed.
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {any} [options] from zlibOptions()
 */
export async function loadEncoder(encoding, options = {}) {
  if (encoding === 'zstd' && !nodeHasZstd) loaded.zstd ??= await loadWasmZstd();
  if (encoding === 'gzip' && options.zopfli) loaded.zopfli ??= await loadZopfli();
}

/** @param {unknown} err */
function zopfliUnavailable(err) {
  const message = `zopfli needs the optional package ${ZOPFLI_PACKAGE} (npm install ${ZOPFLI_PACKAGE})`;
  return new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', message, { cause: err });
}

/**
 * Throw ERR_PRECOMPRESSOR_ENCODING, once and before any work, when the options ask for an
 * encoder this installation does not have (zstd on an old Node without its package; zopfli
 * without its package).
 * @param {{ encodings: readonly string[], zopfli: boolean }} opts
 */
export function checkEncoders(opts) {
  if (opts.encodings.includes('zstd')) zstdBackend();
  if (opts.zopfli && opts.encodings.includes('gzip')) {
    try {
      createRequire(import.meta.url).resolve(ZOPFLI_PACKAGE);
    } catch (err) {
      throw zopfliUnavailable(err);
    }
  }
}

/** @returns {Promise<any>} */
async function loadZopfli() {
  try {
    const m = await import(ZOPFLI_PACKAGE);
    const zopfli = m.default ?? m;
    // Its WebAssembly starts asynchronously: once a first call has gone through, later calls
    // complete synchronously.
    await zopfli.gzipAsync(new Uint8Array(1), { numiterations: 1 });
    return zopfli;
  } catch (err) {
    throw err instanceof PrecompressorError ? err : zopfliUnavailable(err);
  }
}

/** @param {string} what */
function notLoaded(what) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
    `${what} is not loaded in this thread: await loadEncoder() before encodeBufferSync()`);
}

/**
 * Synchronous twin of encodeBuffer (for workers and the benchmark's lower bound). The
 * WebAssembly encoders must have been loaded in this thread with loadEncoder() first.
 * @param {Buffer} buf
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {any} options from zlibOptions()
 * @returns {Buffer}
 */
export function encodeBufferSync(buf, encoding, options) {
  if (encoding === 'br') {
    const out = zlib.brotliCompressSync(buf, options);
    if (options.params[Z.BROTLI_PARAM_MODE] !== Z.BROTLI_MODE_FONT) return out;
    // Font mode is a hint that loses on some fonts (icon fonts): keep the smaller of it and generic
    // (zlibOptions() asks for font mode only up to FONT_TRIAL_MAX).
    const params = { ...options.params, [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_GENERIC };
    const generic = zlib.brotliCompressSync(buf, { ...options, params });
    return generic.length < out.length ? generic : out;
  }
  if (encoding === 'gzip' && !options.zopfli) return zlib.gzipSync(buf, options);
  if (encoding === 'gzip') {
    if (!loaded.zopfli) throw notLoaded('zopfli');
    let out = null;
    // Once loaded, the package calls back synchronously.
    const zopfliOptions = { numiterations: options.iterations, blocksplitting: true, blocksplittingmax: 15 };
    loaded.zopfli.gzip(buf, zopfliOptions, (/** @type {any} */ err, /** @type {Uint8Array} */ r) => {
      if (err) throw err;
      out = r;
    });
    if (out === null) throw notLoaded('zopfli');
    // On tiny files zopfli can lose a byte or two to zlib: keep whichever is smaller (the zlib
    // run is cheap beside zopfli's).
    const plain = zlib.gzipSync(buf, options.gzip);
    return plain.length < /** @type {Uint8Array} */ (out).length ? plain : toBuffer(out);
  }
  let out;
  if (nodeHasZstd) out = Zx.zstdCompressSync(buf, options);
  else {
    if (!loaded.zstd) throw notLoaded('zstd (WebAssembly)');
    out = toBuffer(loaded.zstd.compress(buf, options.zstdLevel));
    const back = loaded.zstd.decompress(out);
    if (Buffer.compare(back, buf) !== 0) {
      throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
        'zstd (WebAssembly) output does not decode to the input');
    }
  }
  assertHttpZstd(out);
  return out;
}

/** @param {Uint8Array} u */
function toBuffer(u) {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/**
 * Can `encoding` with `options` stream (encode a file without holding it in memory)? Only the
 * zlib encoders can: zopfli and WebAssembly zstd need the whole file.
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {any} options from zlibOptions()
 */
export function canStream(encoding, options) {
  if (encoding === 'zstd') return nodeHasZstd;
  return !(encoding === 'gzip' && options.zopfli);
}

/**
 * A streaming encoder (Transform) for files too big to hold in memory (see canStream()).
 * @param {string} encoding
 * @param {any} options from zlibOptions()
 */
export function createEncoder(encoding, options) {
  if (encoding === 'br') return zlib.createBrotliCompress(options);
  if (encoding === 'gzip' && !options.zopfli) return zlib.createGzip(options);
  if (encoding === 'zstd' && nodeHasZstd) return Zx.createZstdCompress(options);
  const what = options.zopfli ? 'zopfli' : 'zstd without Node >= 22.15';
  throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', `${what} cannot stream`);
}

/**
 * Decode a whole buffer of `encoding` (for verification and tests), refusing (RangeError) to
 * produce more than `maxOutputLength` bytes. zstd without Node's zlib zstd needs the WebAssembly
 * decoder loaded in this thread (loadEncoder('zstd')), which cannot bound its output.
 * @param {Buffer} buf
 * @param {'br' | 'gzip' | 'zstd'} encoding
 * @param {number} [maxOutputLength]
 */
export function decodeBufferSync(buf, encoding, maxOutputLength) {
  // An output chunk of the bound's size (zlib's default is 16 KiB, a new buffer per call that a
  // small file's decode does not need; the chunk is at least zlib's minimum, 64 bytes).
  const opts = maxOutputLength === undefined
    ? {}
    : { maxOutputLength, chunkSize: Math.min(Math.max(maxOutputLength, 64), 1024 * 1024) };
  if (encoding === 'zstd') {
    if (nodeHasZstd) return Zx.zstdDecompressSync(buf, opts);
    if (loaded.zstd) return toBuffer(loaded.zstd.decompress(buf));
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
      `decoding zstd synchronously needs Node >= 22.15 (this is ${process.version}) or loadEncoder('zstd') first`);
  }
  return encoding === 'br' ? zlib.brotliDecompressSync(buf, opts) : zlib.gunzipSync(buf, opts);
}
