import crypto from 'node:crypto';
import { DELTA_NAMES } from '../../encodings.js';
import { deltaCodecOf } from '../encoders/index.js';

export { dczMaxWindow, dczWindowLog } from '../encoders/index.js';
// The name rules (which names are hashed, a family's match pattern) are the site policy's.
export { familyOf, escapeUrlPattern } from '../../site-policy.js';

/**
 * Deploy deltas (RFC 9842), buffer → buffer: the two delta encodings, `dcz` (zstd, the old version as
 * raw dictionary) and `dcb` (Brotli, RFC 9841), each decoded and compared before it may be kept.
 */

/** @typedef {import('../../encodings.js').DeltaEncoding} DeltaEncoding */

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

/**
 * Which delta encodings this Node can make, probed: zlib ignores an unknown `dictionary` option
 * (Brotli before 24.15), so only a smaller output that round-trips proves one.
 * @returns {readonly DeltaEncoding[]}
 */
export function deltaEncoders() {
  probed ??= Object.freeze(DELTA_NAMES.filter((e) => probe(e)));
  return probed;
}
/** @type {readonly DeltaEncoding[] | undefined} */
let probed;

/** @param {DeltaEncoding} encoding */
function probe(encoding) {
  const dict = Buffer.from('precompressor probes a dictionary: '.repeat(8) + crypto.randomBytes(48).toString('hex'));
  const data = Buffer.concat([dict.subarray(0, 200), Buffer.from('!'), dict.subarray(200)]);
  try {
    const { compress, decompress, probeOptions } = deltaCodecOf(encoding);
    const plain = compress(data, probeOptions);
    const withDict = compress(data, { ...probeOptions, dictionary: dict });
    return withDict.length < plain.length / 2 && Buffer.compare(decompress(withDict, { dictionary: dict }), data) === 0;
  } catch {
    return false;
  }
}

/**
 * Compress `data` against `dict` to a complete dcb or dcz body; null when the pair cannot be encoded.
 * @param {DeltaEncoding} encoding
 * @param {Buffer} data
 * @param {Buffer} dict
 * @param {Buffer} dictDigest SHA-256 of dict (32 bytes)
 * @returns {Promise<Buffer | null>}
 */
export async function encodeDelta(encoding, data, dict, dictDigest) {
  const codec = deltaCodecOf(encoding);
  if (!codec.accepts(dict) || codec.encode === null) return null; // null: deltaEncoders() does not offer it
  const stream = await codec.encode(data, codec.options(data.length, dict));
  return Buffer.concat([codec.magic, dictDigest, stream]);
}

/**
 * Does `delta` decode, with `dict`, to exactly `data`, with the right header and (dcz) a window the
 * client must accept? A browser that gets a wrong delta fails the load with no fallback.
 * @param {DeltaEncoding} encoding
 * @param {Buffer} delta
 * @param {Buffer} dict
 * @param {Buffer} dictDigest
 * @param {Buffer} data
 */
export function verifyDelta(encoding, delta, dict, dictDigest, data) {
  const codec = deltaCodecOf(encoding);
  const head = codec.magic.length + 32;
  if (delta.length < head || !delta.subarray(0, codec.magic.length).equals(codec.magic)) return false;
  if (!delta.subarray(codec.magic.length, head).equals(dictDigest)) return false;
  const stream = delta.subarray(head);
  if (!codec.fits(stream, dict)) return false;
  try {
    return Buffer.compare(codec.decompress(stream, { dictionary: dict }), data) === 0;
  } catch {
    return false;
  }
}
