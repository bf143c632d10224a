import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { PrecompressorError } from '../errors.js';

/**
 * zstd for HTTP: which encoder this Node can use, and the window rule of RFC 9659
 * (`Content-Encoding: zstd` must not need a window above 8 MB to decode).
 *
 * - Node >= 22.15 / 23.8 has `zlib.zstdCompress`: used, with the window capped explicitly.
 * - Otherwise the optional package `@hpcc-js/wasm-zstd` (zstd compiled to WebAssembly) is
 *   loaded lazily. Its API takes a level but no window: levels 1..19 are the ones whose
 *   window is at most 8 MB in zstd's own parameter tables, so the level is limited to those
 *   (levels 20..22 exist precisely to use larger windows). Every output is also checked.
 */

/** 2^23 bytes: the largest window a `Content-Encoding: zstd` response may require. */
const ZSTD_MAX_WINDOW_LOG = 23;
const ZSTD_MAX_WINDOW = 2 ** ZSTD_MAX_WINDOW_LOG;
const ZSTD_WASM_PACKAGE = '@hpcc-js/wasm-zstd';

/** Does the running Node have zstd in zlib? */
export const nodeHasZstd = typeof (/** @type {any} */ (zlib).zstdCompress) === 'function';

/**
 * Smallest zstd window (10..23 bits) that covers `size` bytes: never more than 8 MB, never
 * more memory for the browser than the file needs.
 * @param {number} size
 */
export function zstdWindowLog(size) {
  let bits = 10;
  while (bits < ZSTD_MAX_WINDOW_LOG && 2 ** bits < size) bits++;
  return bits;
}

/**
 * Window size that the first frame of `buf` requires (RFC 8878 §3.1.1.1), or null when `buf`
 * does not start with a zstd frame header. Pure, for the check after every encoding.
 * @param {Uint8Array} buf
 * @returns {number | null}
 */
export function zstdFrameWindowSize(buf) {
  if (buf.length < 6 || buf[0] !== 0x28 || buf[1] !== 0xb5 || buf[2] !== 0x2f || buf[3] !== 0xfd) return null;
  const fhd = buf[4];
  const singleSegment = (fhd >> 5) & 1;
  if (!singleSegment) {
    const exponent = buf[5] >> 3;
    const base = 2 ** (10 + exponent);
    return base + (base / 8) * (buf[5] & 7);
  }
  // Single segment: the window is the content size, stored after the dictionary id.
  const dictIdBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = [1, 2, 4, 8][fhd >> 6];
  const at = 5 + dictIdBytes;
  if (buf.length < at + fcsBytes) return null;
  let size = 0;
  for (let i = fcsBytes - 1; i >= 0; i--) size = size * 256 + buf[at + i];
  return fcsBytes === 2 ? size + 256 : size;
}

/**
 * Throw unless `out` is a zstd frame whose window is at most 8 MB.
 * @param {Uint8Array} out
 */
export function assertHttpZstd(out) {
  const window = zstdFrameWindowSize(out);
  if (window === null || window > ZSTD_MAX_WINDOW) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', window === null
      ? 'zstd encoder returned no zstd frame'
      : `zstd output needs a ${window}-byte window, more than the 8 MB HTTP allows`);
  }
}

/** @param {unknown} cause */
function unavailable(cause) {
  return new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
    `zstd needs Node >= 22.15 (this is ${process.version}) or the optional package ${ZSTD_WASM_PACKAGE} ` +
    `(npm install ${ZSTD_WASM_PACKAGE})`,
    { cause });
}

/**
 * @type {Promise<{ compress(data: Uint8Array, level: number): Uint8Array,
 *   decompress(data: Uint8Array): Uint8Array }> | undefined}
 */
let wasm;

/**
 * The WebAssembly zstd, loaded once per thread. Rejects with ERR_PRECOMPRESSOR_ENCODING when
 * the package is not installed.
 */
export function loadWasmZstd() {
  wasm ??= import(ZSTD_WASM_PACKAGE).then((m) => m.Zstd.load(), (err) => {
    wasm = undefined;
    throw unavailable(err);
  });
  return wasm;
}

/**
 * Which zstd encoder this process uses: 'node' or 'wasm'. Throws a clear
 * ERR_PRECOMPRESSOR_ENCODING error when there is none. Only resolves the package: the
 * WebAssembly itself is loaded by the threads that encode.
 * @returns {'node' | 'wasm'}
 */
export function zstdBackend() {
  if (nodeHasZstd) return 'node';
  try {
    createRequire(import.meta.url).resolve(ZSTD_WASM_PACKAGE);
  } catch (err) {
    throw unavailable(err);
  }
  return 'wasm';
}

/**
 * zlib options for Node's zstd: the level, and the window capped at 8 MB (and at the file).
 * @param {{ size: number, zstdLevel: number }} p
 */
export function nodeZstdOptions(p) {
  const C = /** @type {Record<string, number>} */ (/** @type {unknown} */ (zlib.constants));
  return {
    chunkSize: Math.min(Math.max(16 * 1024, p.size), 1024 * 1024),
    params: {
      [C.ZSTD_c_compressionLevel]: p.zstdLevel,
      [C.ZSTD_c_windowLog]: zstdWindowLog(p.size),
    },
  };
}
