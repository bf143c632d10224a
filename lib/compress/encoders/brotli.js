import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { chunkSizeFor } from './codec.js';

/** Brotli's codecs: br, and dcb (Brotli against a dictionary). */

const { constants: Z } = zlib;
const MODES = { text: Z.BROTLI_MODE_TEXT, font: Z.BROTLI_MODE_FONT, generic: Z.BROTLI_MODE_GENERIC };
const brotliAsync = promisify(zlib.brotliCompress);

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


/** br (RFC 7932). @type {import('./codec.js').Codec} */
export const brotliCodec = {
  options(p) {
    const mode = p.mode === 'font' && p.size > FONT_TRIAL_MAX ? 'generic' : p.mode;
    return {
      chunkSize: chunkSizeFor(p.size),
      params: {
        [Z.BROTLI_PARAM_QUALITY]: p.brotliQuality,
        [Z.BROTLI_PARAM_MODE]: MODES[mode],
        [Z.BROTLI_PARAM_LGWIN]: brotliWindowBits(p.size),
        [Z.BROTLI_PARAM_SIZE_HINT]: Math.min(p.size, 2 ** 31 - 1),
      },
    };
  },
  costPerByte: () => 1,
  check() {},
  load: async () => {},
  encodeSync(buf, options) {
    const out = zlib.brotliCompressSync(buf, options);
    if (options.params[Z.BROTLI_PARAM_MODE] !== Z.BROTLI_MODE_FONT) return out;
    // Font mode is a hint that loses on some fonts (icon fonts): keep the smaller of it and generic
    // (options() asks for font mode only up to FONT_TRIAL_MAX).
    const params = { ...options.params, [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_GENERIC };
    const generic = zlib.brotliCompressSync(buf, { ...options, params });
    return generic.length < out.length ? generic : out;
  },
  /** encodeSync() on libuv's pool. @param {Buffer} buf @param {any} options */
  async encode(buf, options) {
    const out = await brotliAsync(buf, options);
    if (options.params[Z.BROTLI_PARAM_MODE] !== Z.BROTLI_MODE_FONT) return out;
    const params = { ...options.params, [Z.BROTLI_PARAM_MODE]: Z.BROTLI_MODE_GENERIC };
    const generic = await brotliAsync(buf, { ...options, params });
    return generic.length < out.length ? generic : out;
  },
  canStream: () => true,
  createEncoder: (options) => zlib.createBrotliCompress(options),
  decodeSync: (buf, opts) => zlib.brotliDecompressSync(buf, opts),
  createDecoder: () => zlib.createBrotliDecompress(),
};

/** Brotli window for a delta (the dictionary is addressed beyond it): covers the file, at most 16 MB. */
const dcbWindowBits = brotliWindowBits;

/** dcb: Brotli with the old version as shared dictionary (RFC 9841). @type {import('./codec.js').DeltaCodec} */
export const brotliDeltaCodec = {
  magic: Buffer.from([0xff, 0x44, 0x43, 0x42]),
  options: (size, dict) => ({
    dictionary: dict,
    params: {
      [Z.BROTLI_PARAM_QUALITY]: 11, [Z.BROTLI_PARAM_LGWIN]: dcbWindowBits(size), [Z.BROTLI_PARAM_SIZE_HINT]: size,
    },
  }),
  accepts: () => true,
  fits: () => true,
  compress: (b, o) => zlib.brotliCompressSync(b, o),
  decompress: (b, o) => zlib.brotliDecompressSync(b, o),
  encode: promisify(zlib.brotliCompress),
  scoreOptions: (dict) => /** @type {import('./codec.js').DeltaOptions} */ ({
    dictionary: dict, params: { [Z.BROTLI_PARAM_QUALITY]: 5, [Z.BROTLI_PARAM_LGWIN]: 24 },
  }),
  scoresFast: false,
  // Quality 5 still uses a dictionary; the defaults (11, a 4 MB window) made the probe a few ms of a build.
  probeOptions: { params: { [Z.BROTLI_PARAM_QUALITY]: 5, [Z.BROTLI_PARAM_LGWIN]: 16 } },
};
