import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { PrecompressorError } from '../../errors.js';
import { notLoaded } from './codec.js';

/**
 * zstd for HTTP: Node's zlib zstd where it exists, else WebAssembly (whose levels are limited to 1-19,
 * those with a window of at most 8 MB); every output checked against RFC 9659's 8 MB window.
 */

/** 2^23 bytes: the largest window a `Content-Encoding: zstd` response may require. */
const ZSTD_MAX_WINDOW_LOG = 23;
const ZSTD_MAX_WINDOW = 2 ** ZSTD_MAX_WINDOW_LOG;
const ZSTD_WASM_PACKAGE = '@hpcc-js/wasm-zstd';

export const nodeHasZstd = typeof (/** @type {any} */ (zlib).zstdCompress) === 'function';

/**
 * Smallest zstd window (10..23 bits) that covers `size` bytes, at most 8 MB.
 * @param {number} size
 */
export function zstdWindowLog(size) {
  let bits = 10;
  while (bits < ZSTD_MAX_WINDOW_LOG && 2 ** bits < size) bits++;
  return bits;
}

/**
 * Window size that the first frame of `buf` requires (RFC 8878 §3.1.1.1), or null without a frame header.
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
 * The WebAssembly zstd, loaded once per thread.
 */
export function loadWasmZstd() {
  wasm ??= import(ZSTD_WASM_PACKAGE).then((m) => m.Zstd.load(), (err) => {
    wasm = undefined;
    throw unavailable(err);
  });
  return wasm;
}

/**
 * Which zstd encoder this process uses (ERR_PRECOMPRESSOR_ENCODING when none); only resolves the package.
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

const Zx = /** @type {any} */ (zlib);
/** zstd's zlib constants (absent from Node's types before 22.15). */
const C = /** @type {Record<string, number>} */ (/** @type {unknown} */ (zlib.constants));
/** @type {((buf: Buffer, options: any) => Promise<Buffer>) | null} */
const zstdAsync = nodeHasZstd ? promisify(Zx.zstdCompress) : null;
/** @type {any} the WebAssembly zstd, once loaded in this thread (without Node's) */
let loaded = null;

/** @param {Uint8Array} u */
const toBuffer = (u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * Encode with the WebAssembly zstd, loaded in this thread, checking that the output decodes to the input.
 * @param {Buffer} buf
 * @param {number} level
 */
function wasmEncodeSync(buf, level) {
  if (!loaded) throw notLoaded('zstd (WebAssembly)');
  const out = toBuffer(loaded.compress(buf, level));
  if (Buffer.compare(loaded.decompress(out), buf) !== 0) {
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
      'zstd (WebAssembly) output does not decode to the input');
  }
  return out;
}

/**
 * zstd: Node's zlib where it exists, else WebAssembly (whole files only); every window checked.
 * @type {import('./codec.js').Codec}
 */
export const zstdCodec = {
  options(p) {
    const zstdLevel = p.zstdLevel ?? 19;
    return { zstdLevel, ...nodeZstdOptions({ size: p.size, zstdLevel }) };
  },
  costPerByte: () => 0.3,
  check: () => void zstdBackend(),
  async load() {
    if (!nodeHasZstd) loaded ??= await loadWasmZstd();
  },
  encodeSync(buf, options) {
    const out = nodeHasZstd ? Zx.zstdCompressSync(buf, options) : wasmEncodeSync(buf, options.zstdLevel);
    assertHttpZstd(out);
    return out;
  },
  async encode(buf, options) {
    if (zstdAsync === null) {
      await zstdCodec.load(options);
      return zstdCodec.encodeSync(buf, options);
    }
    const out = await zstdAsync(buf, options);
    assertHttpZstd(out);
    return out;
  },
  canStream: () => nodeHasZstd,
  createEncoder(options) {
    if (nodeHasZstd) return Zx.createZstdCompress(options);
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING', 'zstd without Node >= 22.15 cannot stream');
  },
  decodeSync(buf, opts) {
    if (nodeHasZstd) return Zx.zstdDecompressSync(buf, opts);
    if (loaded) return toBuffer(loaded.decompress(buf));
    throw new PrecompressorError('ERR_PRECOMPRESSOR_ENCODING',
      `decoding zstd synchronously needs Node >= 22.15 (this is ${process.version}) or loadEncoder('zstd') first`);
  },
  createDecoder: typeof Zx.createZstdDecompress === 'function' ? () => Zx.createZstdDecompress() : null,
};

/** zstd's magic number of a formatted dictionary: a dictionary starting with it would not be raw content. */
const ZSTD_DICT_MAGIC = Buffer.from([0x37, 0xa4, 0x30, 0xec]);

/**
 * Largest zstd window a dcz client must accept (RFC 9842 §6.2): max(8 MB, 1.25 × dictionary), at most 128 MB.
 * @param {number} dictSize
 */
export function dczMaxWindow(dictSize) {
  return Math.min(Math.max(8 * 1024 * 1024, 1.25 * dictSize), 128 * 1024 * 1024);
}

/**
 * zstd window log for a delta: covers dictionary + file when the client's limit allows.
 * @param {number} dictSize
 * @param {number} size
 */
export function dczWindowLog(size, dictSize) {
  let bits = 10;
  while (2 ** (bits + 1) <= dczMaxWindow(dictSize) && 2 ** bits < size + dictSize) bits++;
  return bits;
}

/** dcz: zstd with the old version as raw-content dictionary (RFC 9842). @type {import('./codec.js').DeltaCodec} */
export const zstdDeltaCodec = {
  magic: Buffer.from([0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00]),
  options: (size, dict) => ({
    dictionary: dict,
    params: { [C.ZSTD_c_compressionLevel]: 19, [C.ZSTD_c_windowLog]: dczWindowLog(size, dict.length) },
  }),
  // zstd would read a dictionary starting with its own magic number as a formatted dictionary.
  accepts: (dict) => !dict.subarray(0, 4).equals(ZSTD_DICT_MAGIC),
  fits(stream, dict) {
    const window = zstdFrameWindowSize(stream);
    return window !== null && window <= dczMaxWindow(dict.length);
  },
  compress: (b, o) => Zx.zstdCompressSync(b, o),
  decompress: (b, o) => Zx.zstdDecompressSync(b, o),
  encode: zstdAsync,
  // Level 9 ranks candidate dictionaries as 19 would, in a fraction of the time.
  scoreOptions: (dict) => ({ dictionary: dict, params: { [C.ZSTD_c_compressionLevel]: 9 } }),
  scoresFast: true,
  probeOptions: { params: { [C.ZSTD_c_compressionLevel]: 3 } },
};
