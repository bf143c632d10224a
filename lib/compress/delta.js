import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { zstdFrameWindowSize } from './zstd.js';

// The name rules (which names are hashed, a family's match pattern) are the site policy's.
export { familyOf, escapeUrlPattern } from '../site-policy.js';

/**
 * Deploy deltas (RFC 9842, Compression Dictionary Transport): which files are versions of the
 * same asset (families), the URLPattern a browser uses to offer the old version, and the two
 * delta encodings, `dcz` (zstd with the old version as raw-content dictionary) and `dcb` (Brotli
 * with it as shared dictionary, RFC 9841), each decoded and compared before it may be kept.
 * Pure buffer → buffer here; the store and the pass are lib/compress/dictionary-store.js and
 * lib/compress/deltas.js.
 */


/** Delta encodings in server preference order (the smaller wins when both are kept). */
const DELTA_ENCODINGS = Object.freeze(/** @type {const} */ (['dcb', 'dcz']));

/** Files above this size get no deltas (both versions are held in memory, and dcb's window is 16 MB). */
export const DELTA_MAX_SIZE = 16 * 1024 * 1024;


/**
 * Standard base64 of a SHA-256 (as `Available-Dictionary` carries it) from the manifest's `sha256-<base64url>`.
 * @param {string} contentHash
 */
export function dictionaryHashOf(contentHash) {
  return Buffer.from(contentHash.replace(/^sha256-/, ''), 'base64url').toString('base64');
}


// ---- encoders ----

const Zx = /** @type {any} */ (zlib);
const MAGIC = {
  dcb: Buffer.from([0xff, 0x44, 0x43, 0x42]),
  dcz: Buffer.from([0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00]),
};
/** zstd's magic number of a formatted dictionary: a dictionary starting with it would not be raw content. */
const ZSTD_DICT_MAGIC = Buffer.from([0x37, 0xa4, 0x30, 0xec]);

/**
 * Which delta encodings this Node can make, probed (never by version number): a dictionary must
 * round-trip and make the output smaller. Node's zlib ignores an unknown `dictionary` option
 * (Brotli before 24.15), so "no error" proves nothing.
 * @returns {readonly ('dcb' | 'dcz')[]}
 */
export function deltaEncoders() {
  probed ??= Object.freeze(DELTA_ENCODINGS.filter((e) => probe(e)));
  return probed;
}
/** @type {readonly ('dcb' | 'dcz')[] | undefined} */
let probed;

/** @param {'dcb' | 'dcz'} encoding */
function probe(encoding) {
  const dict = Buffer.from('precompressor probes a dictionary: '.repeat(8) + crypto.randomBytes(48).toString('hex'));
  const data = Buffer.concat([dict.subarray(0, 200), Buffer.from('!'), dict.subarray(200)]);
  try {
    const { compress, decompress } = codecs[encoding];
    const plain = compress(data, {});
    const withDict = compress(data, { dictionary: dict });
    return withDict.length < plain.length / 2 && Buffer.compare(decompress(withDict, { dictionary: dict }), data) === 0;
  } catch {
    return false;
  }
}

/**
 * @typedef {{ dictionary?: Buffer, params?: Record<number, number> }} CodecOptions
 * @typedef {{ compress: (b: Buffer, o: CodecOptions) => Buffer, decompress: (b: Buffer, o: CodecOptions) => Buffer,
 *   async: ((b: Buffer, o: CodecOptions) => Promise<Buffer>) | null }} Codec
 * @type {Record<'dcb' | 'dcz', Codec>}
 */
const codecs = {
  dcb: {
    compress: (b, o) => zlib.brotliCompressSync(b, o),
    decompress: (b, o) => zlib.brotliDecompressSync(b, o),
    async: promisify(zlib.brotliCompress),
  },
  dcz: {
    compress: (b, o) => Zx.zstdCompressSync(b, o),
    decompress: (b, o) => Zx.zstdDecompressSync(b, o),
    async: typeof Zx.zstdCompress === 'function' ? promisify(Zx.zstdCompress) : null,
  },
};

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

/**
 * Brotli window for a delta (the dictionary is addressed beyond it): covers the file, at most 16 MB.
 * @param {number} size
 */
function dcbWindowBits(size) {
  let bits = 16;
  while (bits < 24 && 2 ** bits - 16 < size) bits++;
  return bits;
}

/**
 * @param {'dcb' | 'dcz'} encoding
 * @param {number} size
 * @param {Buffer} dict
 * @returns {CodecOptions}
 */
function optionsOf(encoding, size, dict) {
  const Z = /** @type {Record<string, number>} */ (/** @type {unknown} */ (zlib.constants));
  if (encoding === 'dcb') {
    return {
      dictionary: dict,
      params: {
        [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_LGWIN]: dcbWindowBits(size), [Z.BROTLI_PARAM_SIZE_HINT]: size,
      },
    };
  }
  return {
    dictionary: dict,
    params: { [Z.ZSTD_c_compressionLevel]: 19, [Z.ZSTD_c_windowLog]: dczWindowLog(size, dict.length) },
  };
}

/**
 * Compress `data` against `dict` to a complete dcb or dcz body (magic, SHA-256 of the dictionary,
 * stream). Off the main thread (libuv's pool). Returns null when the pair cannot be encoded
 * (zstd would read a dictionary starting with its own magic number as a formatted dictionary).
 * @param {'dcb' | 'dcz'} encoding
 * @param {Buffer} data
 * @param {Buffer} dict
 * @param {Buffer} dictDigest SHA-256 of dict (32 bytes)
 * @returns {Promise<Buffer | null>}
 */
export async function encodeDelta(encoding, data, dict, dictDigest) {
  if (encoding === 'dcz' && dict.subarray(0, 4).equals(ZSTD_DICT_MAGIC)) return null;
  const encode = codecs[encoding].async;
  if (encode === null) return null; // deltaEncoders() does not offer it
  const stream = await encode(data, optionsOf(encoding, data.length, dict));
  return Buffer.concat([MAGIC[encoding], dictDigest, stream]);
}

/**
 * Does `delta` decode, with `dict`, to exactly `data`, with the right header and (dcz) a window the
 * client must accept? A browser that gets a wrong delta fails the load with no fallback.
 * @param {'dcb' | 'dcz'} encoding
 * @param {Buffer} delta
 * @param {Buffer} dict
 * @param {Buffer} dictDigest
 * @param {Buffer} data
 */
export function verifyDelta(encoding, delta, dict, dictDigest, data) {
  const magic = MAGIC[encoding];
  const head = magic.length + 32;
  if (delta.length < head || !delta.subarray(0, magic.length).equals(magic)) return false;
  if (!delta.subarray(magic.length, head).equals(dictDigest)) return false;
  const stream = delta.subarray(head);
  if (encoding === 'dcz') {
    const window = zstdFrameWindowSize(stream);
    if (window === null || window > dczMaxWindow(dict.length)) return false;
  }
  try {
    return Buffer.compare(codecs[encoding].decompress(stream, { dictionary: dict }), data) === 0;
  } catch {
    return false;
  }
}
