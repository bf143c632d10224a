import crypto from 'node:crypto';
import path from 'node:path';
import { DELTA_NAMES } from '../encodings.js';
import { deltaCodecOf } from './encode.js';

export { dczMaxWindow, dczWindowLog } from './zstd.js';

/**
 * Deploy deltas (RFC 9842, Compression Dictionary Transport): which files are versions of the
 * same asset (families), the URLPattern a browser uses to offer the old version, and the two
 * delta encodings, `dcz` (zstd with the old version as raw-content dictionary) and `dcb` (Brotli
 * with it as shared dictionary, RFC 9841), each decoded and compared before it may be kept.
 * Pure buffer → buffer here; the store and the pass are lib/compress/dictionary-store.js and
 * lib/compress/deltas.js.
 */

/** @typedef {import('../encodings.js').DeltaEncoding} DeltaEncoding */

/** The fetch destination (`match-dest`) of a dictionary by extension; others match every destination. */
/** @type {Record<string, string>} */
const DESTINATIONS = { js: 'script', mjs: 'script', cjs: 'script', css: 'style', html: 'document', htm: 'document' };

/** Files above this size get no deltas (both versions are held in memory, and dcb's window is 16 MB). */
export const DELTA_MAX_SIZE = 16 * 1024 * 1024;


const hashChars = /^[A-Za-z0-9_-]+$/;

/**
 * Does a run of hash characters look like a content hash rather than a word? A digit says so at
 * any length. Without one, only Rollup's default 8 base64url characters (about one random hash in
 * five has no digit) with a capital, `-` or `_`, and not a lowercase or Capitalised word
 * (`settings`, `Settings`, `validate`): the rare hash of that shape is missed, never a word taken.
 * @param {string} s
 */
function hashLike(s) {
  if (!hashChars.test(s) || s.length < 8 || s.length > 64) return false;
  if (/[0-9]/.test(s)) return true;
  return s.length === 8 && /[A-Z_-]/.test(s) && !/^[A-Z]?[a-z]+$/.test(s);
}

/**
 * Where the content hash is in a file's base name (without extension), by the default rule:
 * `[name].[hash].ext` and `[name].[hash].chunk.ext` (webpack, Parcel, Astro, SvelteKit: a
 * dot-separated segment that is hash-like, the last such), else `[name]-[hash].ext` (Vite/Rollup,
 * esbuild: 8 hash-like characters, or 8-64 hex digits with a digit), else a name that is only a
 * hash (SvelteKit's `chunks/[hash].js`). Returns [start, end) or null.
 * @param {string} stem base name without its extension
 * @returns {[number, number] | null}
 */
function defaultHashSpan(stem) {
  const segments = stem.split('.');
  for (let i = segments.length - 1; i >= 1; i--) {
    if (hashLike(segments[i])) {
      const start = segments.slice(0, i).join('.').length + 1;
      return [start, start + segments[i].length];
    }
  }
  const hex = /^(.+)-([0-9a-f]{8,64})$/.exec(stem);
  if (hex && /[0-9]/.test(hex[2])) return [hex[1].length + 1, stem.length];
  const eight = /^(.+)-([A-Za-z0-9_-]{8})$/.exec(stem);
  if (eight && hashLike(eight[2])) return [eight[1].length + 1, stem.length];
  if (hashLike(stem)) return [0, stem.length]; // only a hash
  return null;
}

/**
 * The span of the named group `hash` of a user's pattern in `base`, or null.
 * @param {string} base
 * @param {RegExp} pattern
 */
function patternHashSpan(base, pattern) {
  const re = pattern.flags.includes('d') ? pattern : new RegExp(pattern.source, pattern.flags.replace('g', '') + 'd');
  re.lastIndex = 0;
  const m = re.exec(base);
  const span = m?.indices?.groups?.hash;
  return span && span[1] > span[0] ? [span[0], span[1]] : null;
}

/**
 * Escape literal text for the URLPattern constructor-string syntax, as it appears in a URL path:
 * percent-encoded like a browser does (`:`, `@`, `+` and friends stay), then the characters
 * URLPattern gives a meaning (`\ : * ( ) { } ? + #`) escaped with a backslash.
 * @param {string} text
 */
export function escapeUrlPattern(text) {
  const encoded = encodeURIComponent(text).replace(/%(3A|40|24|26|2B|2C|3B|3D)/g, (s) => decodeURIComponent(s));
  return encoded.replace(/[\\:*(){}?+#]/g, (c) => `\\${c}`);
}

/**
 * @typedef {{ key: string, match: string, dest: string | null, hashed: boolean }} Family
 *   key: the same for every version of the asset (POSIX path with `*` for the hash);
 *   match: URLPattern relative to the file's own URL (its folder), for `Use-As-Dictionary`;
 *   dest: fetch destination for `match-dest`, or null (every destination)
 */

/**
 * The family of a file: the versions of one asset across builds, by its name with the content hash
 * taken out. A file without a hash is a family of one path (rewritten in place across builds).
 * Returns null for a name that is only a hash (no stable part to recognise it by), and for a name
 * with a colon (URLPattern would read a relative pattern with one as a protocol).
 * @param {string} rel POSIX path relative to the root
 * @param {RegExp | ((rel: string) => [number, number] | null | undefined) | null} [hashPattern] a RegExp
 *   matched against the base name (its group `hash` is the hash), or a function of the path giving the
 *   hash's span in the base name (null: none; undefined: the default rule)
 * @returns {Family | null}
 */
export function familyOf(rel, hashPattern = null) {
  const slash = rel.lastIndexOf('/');
  const dir = rel.slice(0, slash + 1);
  const base = rel.slice(slash + 1);
  // A relative constructor string is read as `protocol:rest` up to its first colon, even an escaped one.
  if (base.includes(':')) return null;
  const ext = path.posix.extname(base);
  const dest = DESTINATIONS[ext.slice(1).toLowerCase()] ?? null;
  const given = typeof hashPattern === 'function'
    ? hashPattern(rel)
    : hashPattern ? patternHashSpan(base, hashPattern) : undefined;
  const span = given === undefined ? defaultHashSpan(base.slice(0, base.length - ext.length)) : given;
  if (span === null) return { key: rel, match: escapeUrlPattern(base), dest, hashed: false };
  const before = base.slice(0, span[0]);
  const after = base.slice(span[1]);
  if (!/[A-Za-z0-9]/.test(before)) return null;
  const match = `${escapeUrlPattern(before)}*${escapeUrlPattern(after)}`;
  return { key: `${dir}${before}*${after}`, match, dest, hashed: true };
}

/**
 * Standard base64 of a SHA-256 (as `Available-Dictionary` carries it) from the manifest's `sha256-<base64url>`.
 * @param {string} contentHash
 */
export function dictionaryHashOf(contentHash) {
  return Buffer.from(contentHash.replace(/^sha256-/, ''), 'base64url').toString('base64');
}


// ---- encoders ----

/**
 * Which delta encodings this Node can make, probed (never by version number): a dictionary must
 * round-trip and make the output smaller. Node's zlib ignores an unknown `dictionary` option
 * (Brotli before 24.15), so "no error" proves nothing.
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
    const { compress, decompress } = deltaCodecOf(encoding);
    const plain = compress(data, {});
    const withDict = compress(data, { dictionary: dict });
    return withDict.length < plain.length / 2 && Buffer.compare(decompress(withDict, { dictionary: dict }), data) === 0;
  } catch {
    return false;
  }
}

/**
 * Compress `data` against `dict` to a complete dcb or dcz body (magic, SHA-256 of the dictionary,
 * stream). Off the main thread (libuv's pool). Returns null when the pair cannot be encoded
 * (zstd would read a dictionary starting with its own magic number as a formatted dictionary).
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
