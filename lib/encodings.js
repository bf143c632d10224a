// The encoding registry, the only place that names encodings (with negotiation); how the compressor
// makes and checks one is its codec under the same name (lib/compress/encoders/encode.js).

/**
 * @typedef {import('./types.js').Encoding} Encoding a variant's encoding (a file beside its source)
 * @typedef {import('./types.js').DeltaEncoding} DeltaEncoding an encoding against a dictionary (RFC 9842)
 * @typedef {Readonly<{ option: string, min: number, max: number, default: number, describe: string }>} Level
 *   the option that sets the encoder's level, its range and default, and its line in `--help`
 * @typedef {Readonly<{ name: Encoding, token: string, suffix: string, dictionary: false, byDefault: boolean,
 *   level: Level }>} EncodingSpec
 *   token: the Content-Encoding value; suffix: of the variant's file; byDefault: written without
 *   `encodings` (an encoding that is not gets a `--<name>` flag that adds it)
 * @typedef {Readonly<{ name: DeltaEncoding, token: string, suffix: string, dictionary: true }>} DeltaEncodingSpec
 */

/** @type {(e: EncodingSpec) => EncodingSpec} */
const variant = (e) => Object.freeze(e);
/** @type {(e: DeltaEncodingSpec) => DeltaEncodingSpec} */
const delta = (e) => Object.freeze(e);

/** The variant encodings, best first: the server's default preference and the order of `encodings`. */
export const ENCODINGS = Object.freeze([
  variant({
    name: 'br', token: 'br', suffix: '.br', dictionary: false, byDefault: true,
    level: Object.freeze({ option: 'brotliQuality', min: 0, max: 11, default: 11, describe: 'Brotli quality, 0-11' }),
  }),
  variant({
    name: 'zstd', token: 'zstd', suffix: '.zst', dictionary: false, byDefault: false,
    // Levels 20-22 exist to use windows above 8 MB, which HTTP forbids (RFC 9659).
    level: Object.freeze({ option: 'zstdLevel', min: 1, max: 19, default: 19,
      describe: 'zstd level, 1-19 (the window is capped at 8 MB for HTTP whatever the level)' }),
  }),
  variant({
    name: 'gzip', token: 'gzip', suffix: '.gz', dictionary: false, byDefault: true,
    level: Object.freeze({ option: 'gzipLevel', min: 1, max: 9, default: 9, describe: 'gzip level, 1-9' }),
  }),
]);

/** The dictionary encodings of deploy deltas, the server's preference first (the smaller wins when both are kept). */
export const DELTA_ENCODINGS = Object.freeze([
  delta({ name: 'dcb', token: 'dcb', suffix: '.dcb', dictionary: true }),
  delta({ name: 'dcz', token: 'dcz', suffix: '.dcz', dictionary: true }),
]);

/** The variant encodings' names, best first. */
export const ENCODING_NAMES = Object.freeze(ENCODINGS.map((e) => e.name));
/** The delta encodings' names, preferred first. */
export const DELTA_NAMES = Object.freeze(DELTA_ENCODINGS.map((e) => e.name));
/** The encodings written when `encodings` is not given. */
export const DEFAULT_ENCODINGS = Object.freeze(ENCODINGS.filter((e) => e.byDefault).map((e) => e.name));

/** @type {ReadonlyMap<string, EncodingSpec | DeltaEncodingSpec>} */
const BY_NAME = new Map([...ENCODINGS, ...DELTA_ENCODINGS].map((e) => [e.name, e]));
const SUFFIX = new Map(ENCODINGS.map((e) => [e.name, e.suffix]));
const BY_SUFFIX = new Map(ENCODINGS.map((e) => [e.suffix, e.name]));

/**
 * @param {string} name
 */
export function encodingSpec(name) {
  return BY_NAME.get(name);
}

/**
 * The Content-Encoding token of `name` (the name itself for every encoding so far; `identity` is its own).
 * @param {string} name
 */
export function tokenOf(name) {
  return BY_NAME.get(name)?.token ?? name;
}

/**
 * @param {unknown} name
 * @returns {name is Encoding}
 */
export function isEncoding(name) {
  return SUFFIX.has(/** @type {Encoding} */ (name));
}

/**
 * @param {unknown} name
 * @returns {name is DeltaEncoding}
 */
export function isDeltaEncoding(name) {
  return BY_NAME.get(/** @type {string} */ (name))?.dictionary === true;
}

/**
 * @param {string} encoding
 */
export function suffixOf(encoding) {
  return /** @type {string} */ (SUFFIX.get(/** @type {Encoding} */ (encoding)));
}

/**
 * Path of the variant file of `file` (POSIX relative to root, or absolute) for `encoding`: `<file><suffix>`.
 * @param {string} file
 * @param {string} encoding
 */
export function variantPath(file, encoding) {
  return file + suffixOf(encoding);
}

/**
 * The encoding whose suffix (`.br`, `.gz`, `.zst`) ends the path, if any.
 * @param {string} rel
 * @returns {Encoding | undefined}
 */
export function suffixEncoding(rel) {
  const dot = rel.lastIndexOf('.');
  if (dot <= rel.lastIndexOf('/')) return undefined;
  return BY_SUFFIX.get(rel.slice(dot));
}

/**
 * @param {string} rel
 * @param {string} encoding
 */
export function stemOf(rel, encoding) {
  return rel.slice(0, -suffixOf(encoding).length);
}
